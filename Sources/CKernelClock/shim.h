// SPDX-License-Identifier: GPL-3.0-or-later
// The kernel's clock interfaces Swift's Glibc module leaves out: adjtimex(2) (the NTP state a time
// daemon leaves in the kernel) and timerfd(2) (TFD_TIMER_CANCEL_ON_SET tells when the clock is set).
// Only SystemCalls imports this.
#ifndef GAEND_CKERNELCLOCK_SHIM_H
#define GAEND_CKERNELCLOCK_SHIM_H
#include <sys/timex.h>
#include <sys/timerfd.h>
#include <time.h>
#endif
