-- Meta Llama 2, Llama 3, 3.1, 3.2 and 3.3 (dense, SwiGLU, RMSNorm, RoPE, no
-- biases).  Shapes from the config.json files of the meta-llama/* repos on
-- Hugging Face; params_b is the parameter count those repos publish for the
-- safetensors checkpoint (three significant figures or the exact count).
--
-- split_proj "both": transformers' modeling_llama.py (the modules the
-- Hugging Face stacks run; src/transformers/models/llama/, transformers
-- 0022728) builds "self.q_proj = nn.Linear(", the same
-- k_proj and v_proj, and LlamaMLP "self.gate_proj = nn.Linear(
-- self.hidden_size, self.intermediate_size", the same up_proj, called as
-- "self.down_proj(self.act_fn(self.gate_proj(x)) * self.up_proj(x))";
-- Meta's and torchtitan's model.py the same as wq, wk, wv, w1, w3.

model {
  id = "llama2-7b", name = "Llama 2 7B", family = "llama",
  split_proj = "both",
  layers = 32, hidden = 4096, heads = 32, kv_heads = 32, head_dim = 128,
  ffn_hidden = 11008, ffn_gated = true, vocab = 32000,
  tied_embeddings = false, qkv_bias = false, norm = "rms", max_seq = 4096,
  params_b = 6.738415616,
  source = "meta-llama/Llama-2-7b-hf config.json; Touvron et al. 2023 "
        .. "(arXiv:2307.09288) Table 1; exact count 6,738,415,616 as listed "
        .. "for the safetensors checkpoint",
}

model {
  id = "llama2-13b", name = "Llama 2 13B", family = "llama",
  split_proj = "both",
  layers = 40, hidden = 5120, heads = 40, kv_heads = 40, head_dim = 128,
  ffn_hidden = 13824, ffn_gated = true, vocab = 32000,
  tied_embeddings = false, qkv_bias = false, norm = "rms", max_seq = 4096,
  params_b = 13.015864320,
  source = "meta-llama/Llama-2-13b-hf config.json; arXiv:2307.09288 "
        .. "Table 1; 13,015,864,320 parameters in the safetensors checkpoint",
}

model {
  id = "llama2-70b", name = "Llama 2 70B", family = "llama",
  split_proj = "both",
  layers = 80, hidden = 8192, heads = 64, kv_heads = 8, head_dim = 128,
  ffn_hidden = 28672, ffn_gated = true, vocab = 32000,
  tied_embeddings = false, qkv_bias = false, norm = "rms", max_seq = 4096,
  params_b = 68.976648192,
  source = "meta-llama/Llama-2-70b-hf config.json; arXiv:2307.09288 "
        .. "Table 1 (GQA, 8 KV heads); 68,976,648,192 parameters in the "
        .. "safetensors checkpoint",
  notes = "Marketed as 70B; the checkpoint holds 68.98B.",
}

model {
  id = "llama3-8b", name = "Llama 3 8B", family = "llama",
  split_proj = "both",
  layers = 32, hidden = 4096, heads = 32, kv_heads = 8, head_dim = 128,
  ffn_hidden = 14336, ffn_gated = true, vocab = 128256,
  tied_embeddings = false, qkv_bias = false, norm = "rms", max_seq = 8192,
  params_b = 8.030261248,
  source = "meta-llama/Meta-Llama-3-8B config.json; 8,030,261,248 "
        .. "parameters in the safetensors checkpoint",
}

model {
  id = "llama3-70b", name = "Llama 3 70B", family = "llama",
  split_proj = "both",
  layers = 80, hidden = 8192, heads = 64, kv_heads = 8, head_dim = 128,
  ffn_hidden = 28672, ffn_gated = true, vocab = 128256,
  tied_embeddings = false, qkv_bias = false, norm = "rms", max_seq = 8192,
  params_b = 70.553706496,
  source = "meta-llama/Meta-Llama-3-70B config.json; 70,553,706,496 "
        .. "parameters in the safetensors checkpoint (70.6B)",
}

model {
  id = "llama3.1-8b", name = "Llama 3.1 8B", family = "llama",
  split_proj = "both",
  layers = 32, hidden = 4096, heads = 32, kv_heads = 8, head_dim = 128,
  ffn_hidden = 14336, ffn_gated = true, vocab = 128256,
  tied_embeddings = false, qkv_bias = false, norm = "rms", max_seq = 131072,
  params_b = 8.030261248,
  source = "meta-llama/Llama-3.1-8B config.json (same shape as Llama 3 8B, "
        .. "rope_scaling llama3 factor 8); 8.03B published",
}

model {
  id = "llama3.1-70b", name = "Llama 3.1 70B", family = "llama",
  split_proj = "both",
  layers = 80, hidden = 8192, heads = 64, kv_heads = 8, head_dim = 128,
  ffn_hidden = 28672, ffn_gated = true, vocab = 128256,
  tied_embeddings = false, qkv_bias = false, norm = "rms", max_seq = 131072,
  params_b = 70.553706496,
  source = "meta-llama/Llama-3.1-70B config.json (see "
        .. "../shared/research/ecosystem.md 3.2); 70.6B published",
}

model {
  id = "llama3.3-70b", name = "Llama 3.3 70B", family = "llama",
  split_proj = "both",
  layers = 80, hidden = 8192, heads = 64, kv_heads = 8, head_dim = 128,
  ffn_hidden = 28672, ffn_gated = true, vocab = 128256,
  tied_embeddings = false, qkv_bias = false, norm = "rms", max_seq = 131072,
  params_b = 70.553706496,
  source = "meta-llama/Llama-3.3-70B-Instruct config.json (the 3.1 70B "
        .. "shape); 70.6B published",
}

model {
  id = "llama3.1-405b", name = "Llama 3.1 405B", family = "llama",
  split_proj = "both",
  layers = 126, hidden = 16384, heads = 128, kv_heads = 8, head_dim = 128,
  ffn_hidden = 53248, ffn_gated = true, vocab = 128256,
  tied_embeddings = false, qkv_bias = false, norm = "rms", max_seq = 131072,
  params_b = 405.8533888,
  source = "meta-llama/Llama-3.1-405B config.json; Llama 3 Herd of Models "
        .. "(arXiv:2407.21783) Table 3; 405,853,388,800 parameters in the "
        .. "BF16 checkpoint",
}

model {
  id = "llama3.2-1b", name = "Llama 3.2 1B", family = "llama",
  split_proj = "both",
  layers = 16, hidden = 2048, heads = 32, kv_heads = 8, head_dim = 64,
  ffn_hidden = 8192, ffn_gated = true, vocab = 128256,
  tied_embeddings = true, qkv_bias = false, norm = "rms", max_seq = 131072,
  params_b = 1.2358144,
  source = "meta-llama/Llama-3.2-1B config.json; 1,235,814,400 parameters "
        .. "(1.24B) in the safetensors checkpoint",
  notes = "Tied embeddings: the 262M-parameter embedding also serves as the "
       .. "LM head.",
}

model {
  id = "llama3.2-3b", name = "Llama 3.2 3B", family = "llama",
  split_proj = "both",
  layers = 28, hidden = 3072, heads = 24, kv_heads = 8, head_dim = 128,
  ffn_hidden = 8192, ffn_gated = true, vocab = 128256,
  tied_embeddings = true, qkv_bias = false, norm = "rms", max_seq = 131072,
  params_b = 3.212749824,
  source = "meta-llama/Llama-3.2-3B config.json; 3,212,749,824 parameters "
        .. "(3.21B) in the safetensors checkpoint",
}
