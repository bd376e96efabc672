-- A new user's first hour with the Lua API (session 73's walk).  Run with
-- ./gpuplan run tests/lua/luawalk_s73.t.  One block a fix.
local t = require "tap"
local gp = require "gpuplan"

-- 1. gp.memory of a training (or RL) job returned max_ctx = 0, max_seqs
-- = 0, kv_room = 0 and kv_per_seq = 0: fields docs/lua.md gives as a
-- serving job's ("longest context that fits (inference)"), which for a
-- training job read "no context fits".  fit --format json already leaves
-- them out there.  Now they are absent (nil) for training and RL, and an
-- inference breakdown keeps them.
do
  local m = gp.memory{ model = "llama3-8b", gpu = "h100-sxm", method = "full" }
  t.ok(m.total > 0, "training memory: priced")
  t.is(m.max_ctx, nil, "training memory: no max_ctx")
  t.is(m.max_seqs, nil, "training memory: no max_seqs")
  t.is(m.kv_room, nil, "training memory: no kv_room")
  t.is(m.kv_per_seq, nil, "training memory: no kv_per_seq")
  local rl = gp.memory{ model = "qwen2.5-7b", gpu = "h100-sxm", gpus = 8, method = "grpo", zero = 2 }
  t.is(rl.max_ctx, nil, "grpo memory: no max_ctx")
  t.is(rl.kv_room, nil, "grpo memory: no kv_room")
  local inf = gp.memory{ model = "llama3-8b", gpu = "h100-sxm", method = "infer", ctx = 8192 }
  -- llama3-8b's KV a token: 2 (K, V) x 32 layers x 8 kv heads x 128 dims
  -- x 2 B = 131072 B; at 8192 tokens 2^30 B exactly (no tolerance: an
  -- exact product of powers of two)
  t.is(inf.kv_per_seq, 2 * 32 * 8 * 128 * 2 * 8192, "infer memory: kv_per_seq = 2 L kvh d 2B ctx")
  -- whole sequences of that size fit the room, and more than one (16 GB of
  -- bf16 weights leave ~55 GiB of an H100's budget)
  t.is(inf.max_seqs, math.floor(inf.kv_room / inf.kv_per_seq), "infer memory: max_seqs = room / kv")
  t.ok(inf.max_seqs > 1 and inf.max_ctx > 8192, "infer memory: max_seqs and max_ctx positive")
end

-- 2. gp.comm{topology = {...}} with a key that is no topology field and
-- near none said "comm: unknown topology field 'gpus'" and nothing else
-- (every other table's unknown key lists what it takes).  Now: a gp.comm
-- option put inside the table is named as one, anything else gets the
-- list of topology fields.
do
  local ok, e = pcall(gp.comm, { topology = { gpus = 8, gpus_per_node = 8, nodes = 1 },
                                 bytes = 2 ^ 20 })
  t.ok(not ok and tostring(e):find("gpus is gp.comm's own option", 1, true),
    "topology.gpus: named as gp.comm's own option")
  ok, e = pcall(gp.comm, { topology = { gpus_per_node = 8, nodes = 1, zzzz = 1 }, bytes = 2 ^ 20 })
  t.ok(not ok and tostring(e):find("'zzzz' (base_lat_ll, ", 1, true)
    and tostring(e):find("up_bw", 1, true), "topology.zzzz: the topology fields listed")
  -- a near name still gets the one suggestion
  ok, e = pcall(gp.comm, { topology = { gpus_per_node = 8, nodes = 1, up_bww = 1e9 }, bytes = 2 ^ 20 })
  t.ok(not ok and tostring(e):find("did you mean 'up_bw'", 1, true), "topology.up_bww: did you mean up_bw")
  -- and the call the message points to runs: 8 GPUs of one NVLink node at
  -- 450 GB/s a direction
  local r = gp.comm{ topology = { gpus_per_node = 8, nodes = 1, up_kind = "nvlink",
                                  up_bw = "450GB/s per-dir" }, gpus = 8, bytes = 2 ^ 30 }
  t.ok(r.busbw > 0 and r.busbw < 450e9 * 2, "topology beside gpus = 8: priced")
end

-- 3. gp.rl with a reward_model (or PPO critic_model) table the engine
-- refuses said "rl: model.hidden is required" / "rl: model: unknown field
-- 'x'", naming the actor's key, which was a good catalog id.  Now the key
-- given is named; a good table and a catalog model's own table still run.
do
  local base = { model = "qwen2.5-7b", gpu = "h100-sxm", gpus = 8, zero = 2 }
  local ok, e = pcall(gp.rl, t.with(base, { reward_model = { layers = 2 } }))
  t.ok(not ok and tostring(e):find("rl: reward_model.hidden is required", 1, true),
    "reward_model table without hidden: named as reward_model's")
  ok, e = pcall(gp.rl, t.with(base, { algo = "ppo", critic_model = { layers = 2, hidden = 1024,
    heads = 8, vocab = 1000, ffn_hidden = 4096, bogus = 1 } }))
  t.ok(not ok and tostring(e):find("rl: critic_model: unknown field 'bogus'", 1, true),
    "critic_model table with an unknown field: named as critic_model's")
  local cat = gp.catalog()
  local r = gp.rl(t.with(base, { reward_model = cat:get("models", "llama3.2-1b") }))
  t.ok(r.step_s > 0, "a catalog model's table as reward_model: priced")
end

t.done_testing()
