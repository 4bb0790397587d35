// SPDX-License-Identifier: GPL-2.0
/*
 * cider-bench kv --hdr-file: lh_write_hdr() writes known distributions,
 * and hdr-parse (next to this binary), a reader of HdrHistogram's
 * percentile distribution text written apart from it, reads them back:
 * the format, and the numbers it should hold.  That the reader can fail
 * is checked too, on files broken on purpose.
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "lathist.h"

/* hdr-parse FILE ARGS: its exit status. */
static int hdr_parse(const char *file, const char *args)
{
	char self[PATH_MAX], cmd[2 * PATH_MAX], *slash;
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

	if (n <= 0)
		return -1;
	self[n] = '\0';
	slash = strrchr(self, '/');
	if (!slash)
		return -1;
	*slash = '\0';
	snprintf(cmd, sizeof(cmd), "%s/hdr-parse %s %s", self, file, args);
	n = system(cmd);
	return WIFEXITED(n) ? WEXITSTATUS(n) : -1;
}

/* @h into the file @path. */
static int write_to(const struct lathist *h, const char *path)
{
	FILE *f = fopen(path, "w");
	int ret;

	if (!f)
		return -1;
	ret = lh_write_hdr(h, f, 1000);
	return fclose(f) || ret ? -1 : 0;
}

/* @h into a new file; its name in @path (a template). */
static int write_file(const struct lathist *h, char *path)
{
	int fd = mkstemp(path);

	if (fd < 0)
		return -1;
	close(fd);
	return write_to(h, path);
}

static unsigned int count_lines(const char *path)
{
	FILE *f = fopen(path, "r");
	unsigned int n = 0;
	int c;

	while (f && (c = fgetc(f)) != EOF)
		n += c == '\n';
	if (f)
		fclose(f);
	return n;
}

/* @path with its line @n (from 1) replaced by @line, or dropped if NULL. */
static int edit_line(const char *path, unsigned int n, const char *line)
{
	char buf[256], tmp[PATH_MAX];
	FILE *in = fopen(path, "r"), *out;
	unsigned int i = 0;

	snprintf(tmp, sizeof(tmp), "%s.edit", path);
	out = fopen(tmp, "w");
	if (!in || !out)
		return -1;
	while (fgets(buf, sizeof(buf), in))
		if (++i != n)
			fputs(buf, out);
		else if (line)
			fputs(line, out);
	fclose(in);
	return fclose(out) || rename(tmp, path) ? -1 : 0;
}

TEST(one_to_a_thousand_microseconds)
{
	static struct lathist h;
	char path[] = "/tmp/test_hdr.XXXXXX";
	uint64_t v;

	for (v = 1; v <= 1000; v++)
		lh_add(&h, v * 1000);
	ASSERT_EQ(0, write_file(&h, path));
	EXPECT_EQ(0, hdr_parse(path, "--count 1000 --mean 500.5 --max 1000 --at 0.5=500 --at 0.9=900"));
	/* The reader must notice what it is there for. */
	EXPECT_EQ(1, hdr_parse(path, "--count 999"));
	EXPECT_EQ(1, hdr_parse(path, "--at 0.5=400"));
	unlink(path);
}

TEST(a_tail_far_from_the_median)
{
	static struct lathist h;
	char path[] = "/tmp/test_hdr.XXXXXX";
	unsigned int i;

	/* 9,990 of 100 us and 10 of 100 ms: the 100 % row far above the rest. */
	for (i = 0; i < 9990; i++)
		lh_add(&h, 100000);
	for (i = 0; i < 10; i++)
		lh_add(&h, 100000000);
	ASSERT_EQ(0, write_file(&h, path));
	EXPECT_EQ(0, hdr_parse(path, "--count 10000 --max 100000 --mean 199.9 --at 0.5=100"));
	unlink(path);
}

TEST(one_value_and_none)
{
	static struct lathist one, none;
	char a[] = "/tmp/test_hdr.XXXXXX", b[] = "/tmp/test_hdr.XXXXXX";

	lh_add(&one, 42);
	ASSERT_EQ(0, write_file(&one, a));
	EXPECT_EQ(0, hdr_parse(a, "--count 1 --max 0.042 --mean 0.042"));
	ASSERT_EQ(0, write_file(&none, b));
	EXPECT_EQ(0, hdr_parse(b, "--count 0"));
	unlink(a);
	unlink(b);
}

TEST(broken_files_are_refused)
{
	static struct lathist h;
	char path[] = "/tmp/test_hdr.XXXXXX", line[128];
	unsigned int lines;
	uint64_t v;

	for (v = 1; v <= 100; v++)
		lh_add(&h, v * v * 1000);
	ASSERT_EQ(0, write_file(&h, path));
	ASSERT_EQ(0, hdr_parse(path, "--count 100"));
	lines = count_lines(path);
	/* The footer's total count not the last row's (line lines-1: "#[Max"). */
	snprintf(line, sizeof(line), "#[Max     = %12.3f, Total count    = %12u]\n",
		 (double)h.max / 1000, 101);
	ASSERT_EQ(0, edit_line(path, lines - 1, line));
	EXPECT_EQ(1, hdr_parse(path, ""));
	/* A row going backwards: line 5, the 20 % row, its value 0. */
	ASSERT_EQ(0, write_to(&h, path));
	ASSERT_EQ(0, edit_line(path, 5, "       0.000 0.200000000000         20           1.25\n"));
	EXPECT_EQ(1, hdr_parse(path, ""));
	/* No 100 % row (line lines-3). */
	ASSERT_EQ(0, write_to(&h, path));
	ASSERT_EQ(0, edit_line(path, lines - 3, NULL));
	EXPECT_EQ(1, hdr_parse(path, ""));
	/* No header. */
	ASSERT_EQ(0, write_to(&h, path));
	ASSERT_EQ(0, edit_line(path, 1, NULL));
	EXPECT_EQ(1, hdr_parse(path, ""));
	unlink(path);
}

TEST_HARNESS_MAIN
