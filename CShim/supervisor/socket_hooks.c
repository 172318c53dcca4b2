// lnp_socket_hooks.h: six cgroup sock_addr programs, one per hook, each the same seven
// instructions: allow (1) when the calling process is lnp-run's, else refuse (0: EPERM); and a
// setsockopt program that refuses the options lnp decides to any other process.
#define _GNU_SOURCE
#include "lnp_socket_hooks.h"
#include <errno.h>
#include <linux/bpf.h>
#include <stddef.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static long bpf(int command, union bpf_attr *attribute) {
    return syscall(SYS_bpf, command, attribute, sizeof *attribute);
}

enum { OPTIONS_AT_MOST = 32 };

static int load_program(enum bpf_prog_type type, enum bpf_attach_type hook, const struct bpf_insn *program, unsigned count) {
    union bpf_attr attribute;
    memset(&attribute, 0, sizeof attribute);
    attribute.prog_type = type;
    attribute.expected_attach_type = hook;
    attribute.insns = (unsigned long)program;
    attribute.insn_cnt = count;
    attribute.license = (unsigned long)"GPL";
    return (int)bpf(BPF_PROG_LOAD, &attribute);
}

/// setsockopt: lnp-run's process passes; any other is refused the listed options.
static int load_options(int tgid, const uint32_t *options, int count) {
    if (count > OPTIONS_AT_MOST) {
        errno = E2BIG;
        return -1;
    }
    struct bpf_insn program[8 + 2 * OPTIONS_AT_MOST + 4];
    unsigned n = 0;
    program[n++] = (struct bpf_insn){.code = BPF_ALU64 | BPF_MOV | BPF_X, .dst_reg = BPF_REG_6, .src_reg = BPF_REG_1};
    program[n++] = (struct bpf_insn){.code = BPF_JMP | BPF_CALL, .imm = BPF_FUNC_get_current_pid_tgid};
    program[n++] = (struct bpf_insn){.code = BPF_ALU64 | BPF_RSH | BPF_K, .dst_reg = BPF_REG_0, .imm = 32};
    unsigned to_allow = n++;  // patched below: if lnp-run's, allow
    program[n++] = (struct bpf_insn){.code = BPF_LDX | BPF_MEM | BPF_W, .dst_reg = BPF_REG_2, .src_reg = BPF_REG_6,
                                     .off = offsetof(struct bpf_sockopt, level)};
    program[n++] = (struct bpf_insn){.code = BPF_LDX | BPF_MEM | BPF_W, .dst_reg = BPF_REG_3, .src_reg = BPF_REG_6,
                                     .off = offsetof(struct bpf_sockopt, optname)};
    unsigned checks = n;
    n += 2 * (unsigned)count;
    unsigned allow = n;
    program[n++] = (struct bpf_insn){.code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 1};
    program[n++] = (struct bpf_insn){.code = BPF_JMP | BPF_EXIT};
    unsigned deny = n;
    program[n++] = (struct bpf_insn){.code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0};
    program[n++] = (struct bpf_insn){.code = BPF_JMP | BPF_EXIT};
    program[to_allow] = (struct bpf_insn){.code = BPF_JMP | BPF_JEQ | BPF_K, .dst_reg = BPF_REG_0,
                                          .off = (short)(allow - to_allow - 1), .imm = tgid};
    for (int i = 0; i < count; i++) {
        // if level != L: next pair; if name == N: deny
        unsigned at = checks + 2 * (unsigned)i;
        program[at] = (struct bpf_insn){.code = BPF_JMP | BPF_JNE | BPF_K, .dst_reg = BPF_REG_2, .off = 1,
                                        .imm = (int)options[2 * i]};
        program[at + 1] = (struct bpf_insn){.code = BPF_JMP | BPF_JEQ | BPF_K, .dst_reg = BPF_REG_3,
                                            .off = (short)(deny - at - 2), .imm = (int)options[2 * i + 1]};
    }
    return load_program(BPF_PROG_TYPE_CGROUP_SOCKOPT, BPF_CGROUP_SETSOCKOPT, program, n);
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
    return load_program(BPF_PROG_TYPE_CGROUP_SOCK_ADDR, hook, program, sizeof program / sizeof program[0]);
}

/// BPF_PROG_ATTACH or BPF_PROG_DETACH of `program` at `hook` of `cgroup`.
static int attachment(int command, int cgroup, int program, enum bpf_attach_type hook) {
    union bpf_attr attribute;
    memset(&attribute, 0, sizeof attribute);
    attribute.target_fd = (unsigned)cgroup;
    attribute.attach_bpf_fd = (unsigned)program;
    attribute.attach_type = hook;
    return (int)bpf(command, &attribute);
}

int lnp_attach_socket_hooks(int cgroup, int tgid, const uint32_t *options, int count) {
    static const enum bpf_attach_type hooks[] = {
        BPF_CGROUP_INET4_CONNECT, BPF_CGROUP_INET6_CONNECT, BPF_CGROUP_UDP4_SENDMSG, BPF_CGROUP_UDP6_SENDMSG,
        BPF_CGROUP_INET4_BIND,    BPF_CGROUP_INET6_BIND,    BPF_CGROUP_SETSOCKOPT,
    };
    enum { COUNT = sizeof hooks / sizeof hooks[0] };
    int programs[COUNT];
    int attached = 0;
    for (; attached < COUNT; attached++) {
        programs[attached] = hooks[attached] == BPF_CGROUP_SETSOCKOPT ? load_options(tgid, options, count)
                                                                      : load(hooks[attached], tgid);
        if (programs[attached] < 0) break;
        if (attachment(BPF_PROG_ATTACH, cgroup, programs[attached], hooks[attached]) < 0) {
            int error = errno;
            close(programs[attached]);
            errno = error;
            break;
        }
    }
    int error = errno;
    // Attached, a program lives with the cgroup; lnp-run keeps no descriptor of it.
    for (int i = 0; i < attached; i++) {
        if (attached < COUNT) attachment(BPF_PROG_DETACH, cgroup, programs[i], hooks[i]);
        close(programs[i]);
    }
    if (attached == COUNT) return 0;
    errno = error;
    return -1;
}
