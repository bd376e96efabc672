-- gp.comm's all-to-all across nodes (engine/comm_algo.c price_p2p and
-- price_pxn), each figure from the rule's formula by hand.  dgx-h100
-- nodes: 8 GPUs, 8 x 400G NICs (nic_bw 50 GB/s x nic_achievable 0.94 =
-- 47 GB/s each), InfiniBand (max_recvs 8), NCCL's net post 1 us a message
-- (Intel host), 3 us for Simple (tuning.cc "if (p == NCCL_PROTO_SIMPLE)
-- netOverhead *= 3"), 1 us for LL.
-- S is the per-rank send buffer (nccl-tests), n ranks, g = 8 a node,
-- N nodes, bn the node's NIC rate = NICs x 47 GB/s (comm.c: nic_use x
-- bnic; one NIC a node: 47 GB/s for the node).
--   bandwidth, both algorithms: remote = (n - g) / n x S / (bn x pe / g),
--     pe = 1 for simple, 0.5 x 0.5625 for LL (comm_algo.c proto_eff);
--     at these sizes the network binds (the NVLink part, at most
--     7/8 S / (369 GB/s x 0.83), is under a fifth of it).
--   latency: p2p pays one post per remote peer, (n - g) x post; PXN one
--     per remote node per ceil(g / max_recvs) = 1 group: (N - 1) x post;
--     post = 1 us over LL (8 B), 3 us over simple (1 GiB).
--     The rest of each latency is the same at 2 and 4 nodes, so the
--     difference between them is the posts' alone.
-- Exact products: a relative 1e-9 (the engine's double arithmetic).
-- Run with ./gpuplan run tests/lua/comm_a2a_nodes.t.
local t = require "tap"
local gp = require "gpuplan"
local GiB = 2 ^ 30
local R = 50e9 * 0.94          -- one NIC's rate, B/s
local LL = 0.5 * 0.5625        -- LL's payload share
t.plan(38)   -- 8 layouts x 3 + 4 x 2 post pairs + 4 p2p-pxn gaps + 2 picks

local function a2a(algo, nodes, nics, S)
  return gp.comm { op = "all_to_all", bytes = S, nodes = nodes, system = "dgx-h100",
                   nics = nics, algo = algo }
end

for _, algo in ipairs { "p2p", "pxn" } do
  for _, nodes in ipairs { 2, 4 } do
    local n = 8 * nodes
    for _, nics in ipairs { 8, 1 } do
      local bn = nics * R
      -- large: 1 GiB, simple
      local big = a2a(algo, nodes, nics, GiB)
      local want = (n - 8) / n * GiB / (bn / 8)
      t.is(big.proto, "simple", string.format("%s %d nodes %d NICs 1 GiB: simple", algo, nodes, nics))
      t.near(big.bw_time, want, 1e-9, string.format(
        "%s %d nodes %d NICs 1 GiB: (n-g)/n S / (bn/g) = %d/%d x 1 GiB / (%d x 47 GB/s / 8)",
        algo, nodes, nics, n - 8, n, nics))
      -- small: 8 B, LL
      local small = a2a(algo, nodes, nics, 8)
      t.near(small.bw_time, (n - 8) / n * 8 / (bn * LL / 8), 1e-9, string.format(
        "%s %d nodes %d NICs 8 B: the same over LL's payload share 0.28125", algo, nodes, nics))
    end
  end
end

-- The posts: 4 nodes against 2, the same NICs and protocol.
for _, nics in ipairs { 8, 1 } do
  for _, S in ipairs { 8, GiB } do
    local post = S == 8 and 1e-6 or 3e-6
    local p2 = a2a("p2p", 2, nics, S).latency
    local p4 = a2a("p2p", 4, nics, S).latency
    t.near(p4 - p2, ((32 - 8) - (16 - 8)) * post, 1e-9, string.format(
      "p2p %d NICs %s: 16 more remote peers, 16 more posts of %g us", nics,
      S == 8 and "8 B" or "1 GiB", post * 1e6))
    local x2 = a2a("pxn", 2, nics, S).latency
    local x4 = a2a("pxn", 4, nics, S).latency
    t.near(x4 - x2, ((4 - 1) - (2 - 1)) * math.ceil(8 / 8) * post, 1e-9, string.format(
      "pxn %d NICs %s: 2 more remote nodes, one grouped post each", nics, S == 8 and "8 B" or "1 GiB"))
  end
end

-- The posts' counts themselves: p2p's latency less PXN's at the same
-- nodes leaves (n - g) - (N - 1) posts and PXN's second NVLink hop, NCCL's
-- NVLink ring step (tuning.cc hwLat NVLINK, ring row "{ .6, 1.9, 3.4 }"
-- for LL, LL128, Simple: 0.6 us at 8 B over LL, 3.4 us at 1 GiB over
-- simple); the base and the network hop cancel.
for _, nodes in ipairs { 2, 4 } do
  local n = 8 * nodes
  for _, c in ipairs { { 8, 0.6e-6, "8 B", 1e-6 }, { GiB, 3.4e-6, "1 GiB", 3e-6 } } do
    local d = a2a("p2p", nodes, 8, c[1]).latency - a2a("pxn", nodes, 8, c[1]).latency
    t.near(d, ((n - 8) - (nodes - 1)) * c[4] - c[2], 1e-9, string.format(
      "%d nodes %s: p2p - pxn = (%d - %d) posts of %g us - one NVLink hop", nodes, c[3], n - 8,
      nodes - 1, c[4] * 1e6))
  end
end

-- NCCL's pick: PXN from 2.12.7 (its default), p2p before it.
t.is(gp.comm { op = "all_to_all", bytes = GiB, nodes = 2, system = "dgx-h100" }.algo, "pxn",
  "2 nodes, 1 GiB: PXN, NCCL's default from 2.12.7")
t.is(gp.comm { op = "all_to_all", bytes = GiB, nodes = 2, system = "dgx-h100",
               nccl = "2.11.4" }.algo, "p2p", "NCCL 2.11.4: no PXN, p2p")
