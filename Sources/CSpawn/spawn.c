// SPDX-License-Identifier: GPL-3.0-or-later
#define _GNU_SOURCE 1
#include <spawn.h>
#include "CSpawn.h"

int cgaend_spawn_add_closefrom(posix_spawn_file_actions_t *actions, int from) {
    return posix_spawn_file_actions_addclosefrom_np(actions, from);
}

int cgaend_spawn_add_chdir(posix_spawn_file_actions_t *actions, const char *path) {
    return posix_spawn_file_actions_addchdir_np(actions, path);
}

#include <sys/syscall.h>
#include <unistd.h>

int cgaend_pidfd_open(pid_t pid) {
    return (int)syscall(SYS_pidfd_open, pid, 0);
}
