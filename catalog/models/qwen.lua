-- Qwen2.5 and Qwen3 (dense and MoE).  Shapes from the Qwen/* config.json
-- files on Hugging Face; params_b from the model cards ("Number of
-- Parameters") or the exact checkpoint count where one is published.
--
-- Qwen2/2.5 put biases on q, k and v (no config field says so: a rule of
-- model_type qwen2).  Qwen3 drops them and adds a per-head RMSNorm on q and
-- k (2 * head_dim per layer, < 0.001% of the total, not counted).
--
-- split_proj "both": transformers' Qwen2Attention and Qwen3Attention build
-- q_proj, k_proj and v_proj as nn.Linear each (Qwen3's with q_norm and
-- k_norm on the two), their MLPs gate_proj and up_proj, as Llama's
-- (models/llama.lua); the MoE models' experts are priced as grouped GEMMs
-- whatever their modules.

model {
  id = "qwen2.5-7b", name = "Qwen2.5 7B", family = "qwen2",
  split_proj = "both",
  layers = 28, hidden = 3584, heads = 28, kv_heads = 4, head_dim = 128,
  ffn_hidden = 18944, ffn_gated = true, vocab = 152064,
  tied_embeddings = false, qkv_bias = true, norm = "rms", max_seq = 131072,
  params_b = 7.61,
  source = "Qwen/Qwen2.5-7B config.json and model card (7.61B, 6.53B "
        .. "non-embedding); Qwen2.5 report arXiv:2412.15115 Table 1",
  notes = "max_seq 131072 with YaRN; 32768 native.",
}

model {
  id = "qwen2.5-math-7b", name = "Qwen2.5-Math 7B", family = "qwen2",
  split_proj = "both",
  layers = 28, hidden = 3584, heads = 28, kv_heads = 4, head_dim = 128,
  ffn_hidden = 18944, ffn_gated = true, vocab = 152064,
  tied_embeddings = false, qkv_bias = true, norm = "rms", max_seq = 4096,
  params_b = 7.62,
  source = "Qwen/Qwen2.5-Math-7B config.json (Qwen2ForCausalLM: the Qwen2.5 7B "
        .. "shape, max_position_embeddings 4096); Qwen2.5-Math report "
        .. "arXiv:2409.12122 (Qwen2.5-7B continued on math data)",
  notes = "The pretrained-only math model that verl's DAPO recipes start from "
        .. "(a base checkpoint: gp.rl base_checkpoint takes its published mean "
        .. "response); recipes raise its context with max_position_embeddings.",
}

model {
  id = "qwen2.5-14b", name = "Qwen2.5 14B", family = "qwen2",
  split_proj = "both",
  layers = 48, hidden = 5120, heads = 40, kv_heads = 8, head_dim = 128,
  ffn_hidden = 13824, ffn_gated = true, vocab = 152064,
  tied_embeddings = false, qkv_bias = true, norm = "rms", max_seq = 131072,
  params_b = 14.7,
  source = "Qwen/Qwen2.5-14B config.json and model card (14.7B, 13.1B "
        .. "non-embedding)",
}

model {
  id = "qwen2.5-32b", name = "Qwen2.5 32B", family = "qwen2",
  split_proj = "both",
  layers = 64, hidden = 5120, heads = 40, kv_heads = 8, head_dim = 128,
  ffn_hidden = 27648, ffn_gated = true, vocab = 152064,
  tied_embeddings = false, qkv_bias = true, norm = "rms", max_seq = 131072,
  params_b = 32.5,
  source = "Qwen/Qwen2.5-32B config.json and model card (32.5B, 31.0B "
        .. "non-embedding)",
  notes = "The card's 32.5B is below the checkpoint's 32.76B (the config "
       .. "shape gives 31.2B non-embedding, the card 31.0B); the engine "
       .. "count is 0.8% above the card.",
}

model {
  id = "qwen2.5-72b", name = "Qwen2.5 72B", family = "qwen2",
  split_proj = "both",
  layers = 80, hidden = 8192, heads = 64, kv_heads = 8, head_dim = 128,
  ffn_hidden = 29568, ffn_gated = true, vocab = 152064,
  tied_embeddings = false, qkv_bias = true, norm = "rms", max_seq = 131072,
  params_b = 72.7,
  source = "Qwen/Qwen2.5-72B config.json and model card (72.7B, 70.0B "
        .. "non-embedding)",
}

model {
  id = "qwen3-8b", name = "Qwen3 8B", family = "qwen3",
  split_proj = "both",
  layers = 36, hidden = 4096, heads = 32, kv_heads = 8, head_dim = 128,
  ffn_hidden = 12288, ffn_gated = true, vocab = 151936,
  tied_embeddings = false, qkv_bias = false, qk_norm = true, norm = "rms",
  max_seq = 40960,
  params_b = 8.2,
  source = "Qwen/Qwen3-8B config.json and model card (8.2B, 6.95B "
        .. "non-embedding); Qwen3 report arXiv:2505.09388 Table 1",
}

model {
  id = "qwen3-32b", name = "Qwen3 32B", family = "qwen3",
  split_proj = "both",
  layers = 64, hidden = 5120, heads = 64, kv_heads = 8, head_dim = 128,
  ffn_hidden = 25600, ffn_gated = true, vocab = 151936,
  tied_embeddings = false, qkv_bias = false, qk_norm = true, norm = "rms",
  max_seq = 40960,
  params_b = 32.8,
  source = "Qwen/Qwen3-32B config.json and model card (32.8B, 31.2B "
        .. "non-embedding)",
  notes = "heads * head_dim = 8192 is wider than hidden 5120: q and o are "
       .. "5120 x 8192.",
}

model {
  id = "qwen3-30b-a3b", name = "Qwen3 30B-A3B", family = "qwen3_moe",
  split_proj = "both",
  layers = 48, hidden = 2048, heads = 32, kv_heads = 4, head_dim = 128,
  ffn_hidden = 6144, ffn_gated = true, vocab = 151936,
  tied_embeddings = false, qkv_bias = false, qk_norm = true, norm = "rms",
  max_seq = 40960,
  moe = { experts = 128, top_k = 8, shared_experts = 0, ffn_hidden = 768,
          dense_layers = 0 },
  params_b = 30.5, active_params_b = 3.3,
  source = "Qwen/Qwen3-30B-A3B config.json (num_experts 128, "
        .. "num_experts_per_tok 8, moe_intermediate_size 768, "
        .. "decoder_sparse_step 1, mlp_only_layers []) and model card "
        .. "(30.5B total, 3.3B activated)",
  notes = "Every layer is MoE; ffn_hidden (intermediate_size 6144) is unused. "
       .. "Activated count includes both embedding matrices (engine 3.35B).",
}

model {
  id = "qwen3-235b-a22b", name = "Qwen3 235B-A22B", family = "qwen3_moe",
  split_proj = "both",
  layers = 94, hidden = 4096, heads = 64, kv_heads = 4, head_dim = 128,
  ffn_hidden = 12288, ffn_gated = true, vocab = 151936,
  tied_embeddings = false, qkv_bias = false, qk_norm = true, norm = "rms",
  max_seq = 40960,
  moe = { experts = 128, top_k = 8, shared_experts = 0, ffn_hidden = 1536,
          dense_layers = 0 },
  params_b = 235, active_params_b = 22,
  source = "Qwen/Qwen3-235B-A22B config.json and model card (235B total, "
        .. "22B activated)",
  notes = "Every layer is MoE; ffn_hidden (intermediate_size) is unused.",
}
