// SPDX-License-Identifier: GPL-2.0
/*
 * Built only to prove that the data path's header and the protocol
 * core's can be included together, as they will be once the core runs
 * in the kernel on top of channels: a clash of names fails the build.
 */
#include "transport.h"
#include "core/proto.h"
