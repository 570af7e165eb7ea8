# Several "nodes" on one machine, for testing multi-node runs without a cluster. Sourced by
# tests/multinode/multinode_test.sh (bash).
#
# A node is a set of Linux namespaces held open by one small process (tests/multinode/node-init):
#   UTS      its own host name (node1, node2, ...), what gethostname() and /system report;
#   network  its own loopback and one veth interface, eth0, with an address of MN_SUBNET; the
#            other end of every veth is attached to one bridge that lives in a namespace of its
#            own (the "switch"). No address or route is ever added outside these namespaces,
#            so nothing outside the machine can be reached or reached from them;
#   mount    /etc/hosts replaced (bind mount) by one that names every node, and MN_DIR/local
#            replaced by the node's own folder (its /tmp, Slurm spool and PMIx folders), while
#            the rest of the file system (the checkout, MN_DIR/shared) is common to all nodes,
#            as a cluster's shared file system is;
#   cgroup   (where the machine offers a writable cpu controller) one cgroup per node, so a
#            node can be made slow by a CPU quota.
# Commands enter a node with mn_exec (or tests/multinode/node-rsh, Open MPI's rsh agent).
# Every process of a node can be found by its UTS namespace (mn_node_pids) and killed at once
# (mn_kill_node), which is how a node dies. mn_teardown ends everything; each holder also ends
# its node by itself once the process that made it is gone, so a test killed with SIGKILL
# leaves nothing running behind either (MN_DIR itself is then removed by tests/multinode/reaper).
#
# Needs root (or CAP_SYS_ADMIN and CAP_NET_ADMIN), unshare and nsenter (util-linux) and ip
# (iproute2) with veth and bridge support. mn_can_make_nodes says why not, where not.

MN_HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
MN_SUBNET_PREFIX=${MN_SUBNET_PREFIX:-10.213.7}
MN_SUBNET=$MN_SUBNET_PREFIX.0/24
MN_NODES=()

# Prints why nodes cannot be made here and returns 1, or returns 0.
mn_can_make_nodes() {
  local c
  [ "$(id -u)" -eq 0 ] || { echo "not root (namespaces, veth and bridges need it)"; return 1; }
  for c in unshare nsenter ip; do
    command -v "$c" >/dev/null 2>&1 || { echo "no '$c' command"; return 1; }
  done
  local probe
  if ! probe=$(unshare --uts --net --mount /bin/sh -c \
      'hostname mnprobe && ip link add mnbr type bridge && ip link add mna type veth peer name mnb && ip link set mna master mnbr && echo ok' 2>&1) \
      || [ "$probe" != ok ]; then
    echo "cannot make a namespace with a bridge and a veth pair: $(echo "$probe" | tail -n1)"
    return 1
  fi
  return 0
}

# The cpu cgroup folder for node cgroups, "" when none can be used (no slow nodes then).
mn_cgroup_root() {
  if [ -f /sys/fs/cgroup/cgroup.controllers ] && grep -qw cpu /sys/fs/cgroup/cgroup.controllers; then
    echo "v2:/sys/fs/cgroup"
  elif [ -w /sys/fs/cgroup/cpu/cgroup.procs ] && [ -f /sys/fs/cgroup/cpu/cpu.cfs_quota_us ]; then
    echo "v1:/sys/fs/cgroup/cpu"
  fi
}

# mn_setup DIR NAME...: makes the nodes, all attached to one bridge. DIR must exist and be empty.
mn_setup() {
  MN_DIR=$1
  shift
  MN_NODES=("$@")
  export MN_DIR
  mkdir -p "$MN_DIR/nodes" "$MN_DIR/local" "$MN_DIR/shared"
  {
    echo "127.0.0.1 localhost"
    local i=0 n
    for n in "${MN_NODES[@]}"; do
      i=$((i + 1))
      echo "$MN_SUBNET_PREFIX.$((10 + i)) $n"
    done
  } > "$MN_DIR/hosts"
  # cgroups: one per node under one folder of ours
  local cg
  cg=$(mn_cgroup_root)
  MN_CGROUP=""
  if [ -n "$cg" ]; then
    local kind=${cg%%:*} base=${cg#*:}
    local mine=$base/genbench-mn-$$
    if [ "$kind" = v2 ]; then
      # Our folder holds no process itself, only the nodes' folders with the cpu controller.
      if grep -qw cpu "$base/cgroup.subtree_control" 2>/dev/null && mkdir "$mine" 2>/dev/null \
         && echo +cpu > "$mine/cgroup.subtree_control" 2>/dev/null; then
        MN_CGROUP=v2:$mine
      else
        rmdir "$mine" 2>/dev/null
      fi
    elif mkdir "$mine" 2>/dev/null; then
      MN_CGROUP=v1:$mine
    fi
  fi
  echo "$MN_CGROUP" > "$MN_DIR/cgroup"
  export MN_CGROUP

  # the switch: a network namespace with a bridge
  unshare --net /bin/sh "$MN_HERE/node-init" --switch "$MN_DIR" $$ &
  echo $! > "$MN_DIR/switch.pid"
  disown $!
  local n i=0
  for n in "${MN_NODES[@]}"; do
    mkdir -p "$MN_DIR/nodes/$n/tmp"
    if [ -n "$MN_CGROUP" ]; then mkdir -p "${MN_CGROUP#*:}/$n"; fi
    unshare --uts --net --mount /bin/sh "$MN_HERE/node-init" "$n" "$MN_DIR" $$ &
    echo $! > "$MN_DIR/nodes/$n.pid"
    disown $!
  done
  local t=0
  for n in switch "${MN_NODES[@]}"; do
    until [ -e "$MN_DIR/nodes/$n.ready" ]; do
      t=$((t + 1))
      [ $t -gt 100 ] && { echo "mn_setup: node $n did not come up" >&2; return 1; }
      sleep 0.1
    done
  done
  local sw
  sw=$(cat "$MN_DIR/switch.pid")
  nsenter -t "$sw" --net ip link add mnbr type bridge || return 1
  nsenter -t "$sw" --net ip link set mnbr up || return 1
  for n in "${MN_NODES[@]}"; do
    i=$((i + 1))
    local pid
    pid=$(cat "$MN_DIR/nodes/$n.pid")
    nsenter -t "$sw" --net ip link add "p$i" type veth peer name eth0 netns "$pid" || return 1
    nsenter -t "$sw" --net ip link set "p$i" master mnbr up || return 1
    nsenter -t "$pid" --net ip addr add "$MN_SUBNET_PREFIX.$((10 + i))/24" dev eth0 || return 1
    nsenter -t "$pid" --net ip link set eth0 up || return 1
  done
  # every node reaches every other: a TCP connection to a closed port is refused (not timed out)
  for n in "${MN_NODES[@]}"; do
    local m msg
    for m in "${MN_NODES[@]}"; do
      msg=$(mn_exec "$n" timeout 3 bash -c "exec 3<>/dev/tcp/$m/9" 2>&1)
      case $msg in
        *refused*) ;;
        *) echo "mn_setup: $n cannot reach $m: ${msg:-timed out}" >&2; return 1 ;;
      esac
    done
  done
}

# mn_exec NODE CMD...: runs CMD inside NODE (its namespaces and cgroup), in the foreground.
mn_exec() {
  local n=$1
  shift
  "$MN_HERE/node-rsh" --keep-env "$n" "$@"
}

# The holder PID of a node, or "" once it is gone.
mn_holder() { cat "$MN_DIR/nodes/$1.pid" 2>/dev/null; }

# PIDs of every process in NODE's UTS namespace (its holder and everything started in it).
# `-ef` compares the namespaces' inodes without a process per candidate.
mn_node_pids() {
  local holder p
  holder=$(mn_holder "$1")
  [ -n "$holder" ] && [ -e "/proc/$holder/ns/uts" ] || return 0
  local ns=/proc/$holder/ns/uts
  # a copy of the holder's namespace handle outlives the holder itself within this loop
  exec {fd}<"$ns" || return 0
  for p in /proc/[0-9]*; do
    [ "$p/ns/uts" -ef "/proc/self/fd/$fd" ] && echo "${p#/proc/}"
  done
  exec {fd}<&-
}

# mn_kill_node NODE: SIGKILL to every process of NODE, repeated until none is left (a process
# forked meanwhile is caught by the next round). The node's network goes with its namespace.
mn_kill_node() {
  local n=$1 pids holder fd p
  holder=$(mn_holder "$n")
  [ -n "$holder" ] && [ -e "/proc/$holder/ns/uts" ] || return 0
  exec {fd}<"/proc/$holder/ns/uts" || return 0
  for _ in $(seq 1 100); do
    pids=()
    for p in /proc/[0-9]*; do
      [ "$p/ns/uts" -ef "/proc/self/fd/$fd" ] && pids+=("${p#/proc/}")
    done
    if [ ${#pids[@]} -eq 0 ]; then exec {fd}<&-; return 0; fi
    kill -9 "${pids[@]}" 2>/dev/null
    sleep 0.02
  done
  exec {fd}<&-
  echo "mn_kill_node: processes of $n survive: ${pids[*]}" >&2
  return 1
}

# mn_slow_node NODE PERCENT: caps NODE's processes together at PERCENT (1 to 100) of one CPU
# (0: no cap), as a quota of 1 ms per period of 100/PERCENT ms (20%: 5 ms). 1 ms is the smallest
# quota the kernel takes (a smaller one is EINVAL), so this is the shortest period for the share.
# Short periods matter: a process that has used up the quota waits for the next period, and work
# that needs less CPU than one quota after such a wait is not slowed at all (see
# configs/straggler.yaml). Returns 1 where there is no cpu cgroup to do it with.
mn_slow_node() {
  local n=$1 pct=$2
  [ -n "$MN_CGROUP" ] || return 1
  local d=${MN_CGROUP#*:}/$n
  if [ "${MN_CGROUP%%:*}" = v2 ]; then
    if [ "$pct" -eq 0 ]; then echo "max 100000" > "$d/cpu.max"; else echo "1000 $((100000 / pct))" > "$d/cpu.max"; fi
  elif [ "$pct" -eq 0 ]; then
    echo -1 > "$d/cpu.cfs_quota_us"
  else
    echo $((100000 / pct)) > "$d/cpu.cfs_period_us" && echo 1000 > "$d/cpu.cfs_quota_us"
  fi
}

# mn_node_weight NODE FACTOR: NODE's processes together weigh FACTOR times a default cgroup
# against the rest of the machine (1: the default), so that other work on a busy machine does
# not blur the difference between a slow node and the others. Returns 1 without a cpu cgroup.
mn_node_weight() {
  local n=$1 f=$2
  [ -n "$MN_CGROUP" ] || return 1
  local d=${MN_CGROUP#*:}/$n
  if [ "${MN_CGROUP%%:*}" = v2 ]; then echo $((100 * f)) > "$d/cpu.weight"; else echo $((1024 * f)) > "$d/cpu.shares"; fi
}

# Ends every node and the switch, removes the cgroups. Safe to call more than once.
mn_teardown() {
  local n
  for n in "${MN_NODES[@]}"; do mn_kill_node "$n" 2>/dev/null; done
  local sw
  sw=$(cat "$MN_DIR/switch.pid" 2>/dev/null)
  [ -n "$sw" ] && kill -9 "$sw" 2>/dev/null
  if [ -n "${MN_CGROUP:-}" ]; then
    local d=${MN_CGROUP#*:} t
    for n in "${MN_NODES[@]}"; do
      for t in 1 2 3 4 5 6 7 8 9 10; do
        [ -d "$d/$n" ] || break
        rmdir "$d/$n" 2>/dev/null && break
        sleep 0.1
      done
    done
    rmdir "$d" 2>/dev/null
  fi
  return 0
}
