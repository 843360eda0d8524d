// SPDX-License-Identifier: GPL-3.0-or-later
// posix_spawn's GNU extensions, which Swift's Glibc module does not declare (it is built without
// _GNU_SOURCE), and pidfd_open. Only SystemCalls imports this target.
#ifndef GAEND_CSPAWN_H
#define GAEND_CSPAWN_H

#include <spawn.h>

// posix_spawn_file_actions_addclosefrom_np: close every descriptor from `from` up in the child.
int cgaend_spawn_add_closefrom(posix_spawn_file_actions_t *actions, int from);
// posix_spawn_file_actions_addchdir_np: the child's working directory.
int cgaend_spawn_add_chdir(posix_spawn_file_actions_t *actions, const char *path);

// pidfd_open(2), through syscall(2), which is variadic: a descriptor that is readable once the
// child has ended (Linux 5.3), so its end is waited for in poll(2) beside its output.
int cgaend_pidfd_open(pid_t pid);

#endif
