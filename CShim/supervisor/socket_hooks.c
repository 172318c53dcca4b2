// lnp_socket_hooks.h: six cgroup sock_addr programs, one per hook, each the same seven
// instructions: allow (1) when the calling process is lnp-run's, else refuse (0: EPERM).
#define _GNU_SOURCE
#include "lnp_socket_hooks.h"
#include <errno.h>
#include <linux/bpf.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static long bpf(int command, union bpf_attr *attribute) {
    return syscall(SYS_bpf, command, attribute, sizeof *attribute);
}

static int load(enum bpf_attach_type hook, int tgid) {
    struct bpf_insn program[] = {
        {.code = BPF_JMP | BPF_CALL, .imm = BPF_FUNC_get_current_pid_tgid},  // r0 = tgid << 32 | pid
        {.code = BPF_ALU64 | BPF_RSH | BPF_K, .dst_reg = BPF_REG_0, .imm = 32},
        {.code = BPF_JMP | BPF_JEQ | BPF_K, .dst_reg = BPF_REG_0, .off = 2, .imm = tgid},
        {.code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0},
        {.code = BPF_JMP | BPF_EXIT},
        {.code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 1},
        {.code = BPF_JMP | BPF_EXIT},
    };
    union bpf_attr attribute;
    memset(&attribute, 0, sizeof attribute);
    attribute.prog_type = BPF_PROG_TYPE_CGROUP_SOCK_ADDR;
    attribute.expected_attach_type = hook;
    attribute.insns = (unsigned long)program;
    attribute.insn_cnt = sizeof program / sizeof program[0];
    attribute.license = (unsigned long)"GPL";
    return (int)bpf(BPF_PROG_LOAD, &attribute);
}

static int attach(int cgroup, int program, enum bpf_attach_type hook) {
    union bpf_attr attribute;
    memset(&attribute, 0, sizeof attribute);
    attribute.target_fd = (unsigned)cgroup;
    attribute.attach_bpf_fd = (unsigned)program;
    attribute.attach_type = hook;
    return (int)bpf(BPF_PROG_ATTACH, &attribute);
}

static void detach(int cgroup, int program, enum bpf_attach_type hook) {
    union bpf_attr attribute;
    memset(&attribute, 0, sizeof attribute);
    attribute.target_fd = (unsigned)cgroup;
    attribute.attach_bpf_fd = (unsigned)program;
    attribute.attach_type = hook;
    bpf(BPF_PROG_DETACH, &attribute);
}

int lnp_attach_socket_hooks(int cgroup, int tgid) {
    static const enum bpf_attach_type hooks[] = {
        BPF_CGROUP_INET4_CONNECT, BPF_CGROUP_INET6_CONNECT, BPF_CGROUP_UDP4_SENDMSG,
        BPF_CGROUP_UDP6_SENDMSG,  BPF_CGROUP_INET4_BIND,    BPF_CGROUP_INET6_BIND,
    };
    enum { COUNT = sizeof hooks / sizeof hooks[0] };
    int programs[COUNT];
    int attached = 0;
    for (; attached < COUNT; attached++) {
        programs[attached] = load(hooks[attached], tgid);
        if (programs[attached] < 0) break;
        if (attach(cgroup, programs[attached], hooks[attached]) < 0) {
            int error = errno;
            close(programs[attached]);
            errno = error;
            break;
        }
    }
    int error = errno;
    // Attached, a program lives with the cgroup; lnp-run keeps no descriptor of it.
    for (int i = 0; i < attached; i++) {
        if (attached < COUNT) detach(cgroup, programs[i], hooks[i]);
        close(programs[i]);
    }
    if (attached == COUNT) return 0;
    errno = error;
    return -1;
}
