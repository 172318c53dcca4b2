#!/bin/bash
# A private Bonjour network for the tests: two network namespaces (lnpbj-client, lnpbj-peer)
# joined by a veth pair, each with a mount namespace holding a private /run — so a private
# /run/dbus and /run/avahi-daemon — its own D-Bus system bus, and an avahi-daemon bound to its
# veth alone. The peer advertises "peer printer" (_ipp._tcp 631) and "peer web" (_http._tcp 80)
# as host peer.local. Nothing runs on the host's interfaces or its bus.
#
#   bonjour_lab.sh up STATE      make it; STATE (a directory) keeps configs, logs and pids
#   bonjour_lab.sh exec STATE CMD...   CMD in the client's network and mount namespaces, with
#                                      DBUS_SYSTEM_BUS_ADDRESS naming the private bus
#   bonjour_lab.sh peer STATE CMD...   the same in the peer
#   bonjour_lab.sh down STATE    kill everything in the namespaces and delete them
#
# BONJOUR_LAB_PREFIX (default lnpbj) names the namespaces and interfaces, so that two labs
# can run side by side.
set -euo pipefail

NS=(client peer)
P=${BONJOUR_LAB_PREFIX:-lnpbj}
declare -A ADDR4=([client]=10.79.0.1 [peer]=10.79.0.2) ADDR6=([client]=fd79::1 [peer]=fd79::2)
declare -A IFACE=([client]=${P}c0 [peer]=${P}p0)

say() { echo "bonjour_lab: $*" >&2; }

down() {
    local n pids
    for n in "${NS[@]}"; do
        ip netns list | grep -qw "$P-$n" || continue
        pids=$(ip netns pids "$P-$n" || true)
        [ -n "$pids" ] && kill $pids 2>/dev/null || true
        for _ in $(seq 20); do pids=$(ip netns pids "$P-$n" || true); [ -z "$pids" ] && break; sleep 0.1; done
        [ -n "$pids" ] && kill -9 $pids 2>/dev/null || true
        ip netns del "$P-$n"
    done
}

write_configs() {   # $1 = role
    mkdir -p "$S/$1"
    cat >"$S/system-bus.conf" <<CONF
<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>system</type>
  <user>messagebus</user>
  <listen>unix:path=/run/dbus/system_bus_socket</listen>
  <pidfile>/run/dbus/pid</pidfile>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow user="*"/>
    <deny own="*"/>
    <allow send_type="method_call"/>
    <allow send_type="signal"/>
    <allow send_requested_reply="true" send_type="method_return"/>
    <allow send_requested_reply="true" send_type="error"/>
    <allow receive_type="method_call"/> <allow receive_type="signal"/>
    <allow receive_type="method_return"/> <allow receive_type="error"/>
  </policy>
  <!-- Avahi's own policy, which lets the daemon own org.freedesktop.Avahi. -->
  <include>/usr/share/dbus-1/system.d/avahi-dbus.conf</include>
</busconfig>
CONF
    cat >"$S/$1/avahi-daemon.conf" <<CONF
[server]
host-name=$1
use-ipv4=yes
use-ipv6=yes
allow-interfaces=${IFACE[$1]}
enable-dbus=yes
[wide-area]
enable-wide-area=no
[publish]
publish-hinfo=no
publish-workstation=no
[reflector]
enable-reflector=no
CONF
}

# Runs inside `ip netns exec PREFIX-ROLE unshare --mount --propagation private`: a tmpfs over
# /run with the host's entries bound back, except dbus/ and avahi-daemon/, which start empty,
# and netns/, whose mounts would keep other namespaces alive.
inside() {
    local role=$1 e n
    findmnt -rn -o TARGET | grep '^/run/netns/' | xargs -r -n1 umount -l
    mkdir -p "$S/$role/hostrun"
    mount --rbind /run "$S/$role/hostrun"
    mount -t tmpfs -o mode=755 "$P-run" /run
    for e in "$S/$role/hostrun"/* "$S/$role/hostrun"/.[!.]*; do
        [ -e "$e" ] || [ -L "$e" ] || continue
        n=${e##*/}
        case $n in dbus|avahi-daemon|netns) continue ;; esac
        [ -e "/run/$n" ] && continue
        if [ -L "$e" ]; then ln -s "$(readlink "$e")" "/run/$n"
        elif [ -d "$e" ]; then mkdir "/run/$n"; mount --rbind "$e" "/run/$n"
        else touch "/run/$n"; mount --bind "$e" "/run/$n"; fi
    done
    umount -l "$S/$role/hostrun"
    mkdir -m 755 /run/dbus /run/avahi-daemon
    dbus-daemon --config-file="$S/system-bus.conf" --fork --print-pid=3 3>"$S/$role/dbus.pid"
    setsid avahi-daemon -f "$S/$role/avahi-daemon.conf" --no-chroot --no-rlimits \
        </dev/null >"$S/$role/avahi.log" 2>&1 &
    # Running (2) once its host name is probed and announced.
    for _ in $(seq 150); do
        dbus-send --system --print-reply --dest=org.freedesktop.Avahi / \
            org.freedesktop.Avahi.Server.GetState 2>/dev/null | grep -q 'int32 2' && return 0
        sleep 0.1
    done
    say "avahi-daemon in $P-$role did not start:"; cat "$S/$role/avahi.log" >&2; return 1
}

in_ns() {   # $1 = role, then a command, in that role's network and mount namespaces
    local role=$1; shift
    [ -s "$S/$role/dbus.pid" ] || { say "not up"; return 1; }
    nsenter -t "$(cat "$S/$role/dbus.pid")" -n -m --wd="$PWD" -- \
        env DBUS_SYSTEM_BUS_ADDRESS=unix:path=/run/dbus/system_bus_socket AVAHI_COMPAT_NOWARN=1 "$@"
}

up() {
    local n
    down
    mkdir -p "$S"
    ip netns add $P-client; ip netns add $P-peer
    for n in "${NS[@]}"; do   # no duplicate address detection: addresses usable at once
        ip netns exec "$P-$n" sysctl -qw net.ipv6.conf.default.accept_dad=0
    done
    ip link add "${IFACE[client]}" netns "$P-client" type veth peer name "${IFACE[peer]}" netns "$P-peer"
    for n in "${NS[@]}"; do
        ip -n "$P-$n" link set lo up
        ip -n "$P-$n" link set "${IFACE[$n]}" multicast on up
        ip -n "$P-$n" addr add "${ADDR4[$n]}/24" dev "${IFACE[$n]}"
        ip -n "$P-$n" addr add "${ADDR6[$n]}/64" dev "${IFACE[$n]}" nodad
        write_configs "$n"
    done
    local pids=()
    for n in "${NS[@]}"; do
        ip netns exec "$P-$n" unshare --mount --propagation private -- "$0" _inside "$S" "$n" & pids+=($!)
    done
    for n in "${pids[@]}"; do wait "$n"; done
    in_ns peer setsid avahi-publish -s "peer printer" _ipp._tcp 631 "note=lnp" </dev/null >"$S/peer/publish-ipp.log" 2>&1 &
    in_ns peer setsid avahi-publish -s "peer web" _http._tcp 80 </dev/null >"$S/peer/publish-http.log" 2>&1 &
    for _ in $(seq 100); do
        grep -q Established "$S/peer/publish-ipp.log" 2>/dev/null && grep -q Established "$S/peer/publish-http.log" 2>/dev/null && return 0
        sleep 0.1
    done
    say "avahi-publish failed:"; cat "$S/peer"/publish-*.log >&2; return 1
}

[ "$(id -u)" = 0 ] || { say "needs root"; exit 1; }
command=${1:?usage: bonjour_lab.sh up|exec|peer|down STATE ...}
S=$(realpath -m "${2:?a state directory}")
shift 2
case $command in
    _inside) inside "$1" ;;
    up) up ;;
    down) down ;;
    exec) in_ns client "$@" ;;
    peer) in_ns peer "$@" ;;
    *) sed -n '2,13p' "$0"; exit 2 ;;
esac
