# Sourced by the fabric benchmarks: start_etcd_cluster DIR starts a private 3-member etcd
# cluster on free loopback ports (data and logs under DIR), appends its processes to the
# caller's `pids` array (the caller kills them on exit) and sets `endpoints`
# ("127.0.0.1:P1,127.0.0.1:P2,127.0.0.1:P3") once the cluster answers.
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

start_etcd_cluster() {
  local dir=$1 cluster="" i
  local cport=() pport=()
  command -v etcd >/dev/null || { echo "etcd is missing (apt install etcd-server etcd-client)" >&2; exit 1; }
  endpoints=""
  for i in 0 1 2; do
    cport[$i]=$(free_port); pport[$i]=$(free_port)
    cluster+="${cluster:+,}m$i=http://127.0.0.1:${pport[$i]}"
    endpoints+="${endpoints:+,}127.0.0.1:${cport[$i]}"
  done
  for i in 0 1 2; do
    etcd --name m$i --data-dir "$dir/etcd$i" --log-level error \
      --listen-client-urls http://127.0.0.1:${cport[$i]} --advertise-client-urls http://127.0.0.1:${cport[$i]} \
      --listen-peer-urls http://127.0.0.1:${pport[$i]} --initial-advertise-peer-urls http://127.0.0.1:${pport[$i]} \
      --initial-cluster "$cluster" --initial-cluster-token "asnbench$$" --initial-cluster-state new \
      >"$dir/etcd$i.log" 2>&1 &
    pids+=($!)
  done
  for _ in $(seq 100); do etcdctl --endpoints "$endpoints" put /bench/ready 1 >/dev/null 2>&1 && return 0; sleep 0.2; done
  echo "the etcd cluster did not answer: $dir/etcd0.log" >&2
  exit 1
}
