-- GPT-style dense models with LayerNorm, a plain 4h GELU MLP and biases on
-- every linear: GPT-3, the Megatron-LM GPT family of the published scaling
-- studies, and BLOOM.
--
-- Megatron GPT shapes: Narayanan et al. 2021 "Efficient Large-Scale Language
-- Model Training on GPU Clusters Using Megatron-LM" (arXiv:2104.04473)
-- Table 1, vocabulary 51,200 and sequence 2,048 (section 5.1); Korthikanti
-- et al. 2022 "Reducing Activation Recomputation in Large Transformer
-- Models" (arXiv:2205.05198) Table 3.  Their eq. (2):
--   P = 12 l h^2 (1 + 13/(12 h) + (V + s)/(12 l h))
-- counts the learned position table (s h), given here as pos_embeddings.

local function megatron(t)
  t.family = "gpt"
  -- one fused query_key_value and one dense_h_to_4h (Megatron-LM's
  -- ParallelAttention and ParallelMLP; transformers' GPT-2 "self.c_attn =
  -- Conv1D(3 * self.embed_dim, self.embed_dim)")
  t.split_proj = "none"
  t.kv_heads = t.heads
  t.ffn_hidden = 4 * t.hidden
  t.ffn_gated = false
  t.vocab = 51200
  t.tied_embeddings = true
  t.linear_bias = true
  t.norm = "layer"
  t.max_seq = 2048
  t.positions = "learned"
  t.pos_embeddings = 2048   -- learned absolute positions, s x h
  return model(t)
end

local narayanan = "Narayanan et al. 2021 (arXiv:2104.04473) Table 1"
local korthikanti = "Korthikanti et al. 2022 (arXiv:2205.05198) Table 3"

megatron { id = "megatron-gpt-1.7b", name = "Megatron GPT 1.7B",
  layers = 24, hidden = 2304, heads = 24, params_b = 1.7,
  source = narayanan,
  notes = "Table 1 prints 1.7 (one decimal); eq. (2) gives 1.652B." }
megatron { id = "megatron-gpt-3.6b", name = "Megatron GPT 3.6B",
  layers = 30, hidden = 3072, heads = 32, params_b = 3.6,
  source = narayanan,
  notes = "Table 1 prints 3.6 (one decimal); eq. (2) gives 3.562B." }
megatron { id = "megatron-gpt-7.5b", name = "Megatron GPT 7.5B",
  layers = 36, hidden = 4096, heads = 32, params_b = 7.5,
  source = narayanan }
megatron { id = "megatron-gpt-18b", name = "Megatron GPT 18.4B",
  layers = 40, hidden = 6144, heads = 48, params_b = 18.4,
  source = narayanan }
megatron { id = "megatron-gpt-22b", name = "Megatron GPT 22B",
  layers = 48, hidden = 6144, heads = 64, params_b = 22,
  source = korthikanti }
megatron { id = "megatron-gpt-39b", name = "Megatron GPT 39.1B",
  layers = 48, hidden = 8192, heads = 64, params_b = 39.1,
  source = narayanan }
megatron { id = "megatron-gpt-76b", name = "Megatron GPT 76.1B",
  layers = 60, hidden = 10240, heads = 80, params_b = 76.1,
  source = narayanan }
megatron { id = "megatron-gpt-145b", name = "Megatron GPT 145.6B",
  layers = 80, hidden = 12288, heads = 96, params_b = 145.6,
  source = narayanan }
megatron { id = "megatron-gpt-175b", name = "Megatron GPT 175B",
  layers = 96, hidden = 12288, heads = 96, params_b = 175,
  source = korthikanti,
  notes = "GPT-3 175B shape with Megatron's 51,200 vocabulary; eq. (2) "
       .. "gives 174.6B." }
megatron { id = "megatron-gpt-310b", name = "Megatron GPT 310.1B",
  layers = 96, hidden = 16384, heads = 128, params_b = 310.1,
  source = narayanan }
megatron { id = "megatron-gpt-530b", name = "Megatron GPT 529.6B",
  layers = 105, hidden = 20480, heads = 128, params_b = 529.6,
  source = narayanan .. "; " .. korthikanti .. " (as 530B); the "
        .. "Megatron-Turing NLG 530B shape (arXiv:2201.11990)" }
megatron { id = "megatron-gpt-1t", name = "Megatron GPT 1T",
  layers = 128, hidden = 25600, heads = 160, params_b = 1008.0,
  source = narayanan .. " (1008.0B); " .. korthikanti .. " (as 1T)" }

model {
  id = "gpt3-175b", name = "GPT-3 175B", family = "gpt",
  split_proj = "none",
  layers = 96, hidden = 12288, heads = 96, kv_heads = 96, head_dim = 128,
  ffn_hidden = 49152, ffn_gated = false, vocab = 50257,
  tied_embeddings = true, linear_bias = true, qkv_bias = true,
  norm = "layer", max_seq = 2048, positions = "learned",
  pos_embeddings = 2048, params_b = 175,
  source = "Brown et al. 2020 (arXiv:2005.14165) Table 2.1: n_layers 96, "
        .. "d_model 12288, n_heads 96, d_head 128, n_ctx 2048; GPT-2 BPE "
        .. "vocabulary 50,257",
  notes = "Engine count 174.6B (eq. (2) of Narayanan et al. with V = 50257); "
       .. "the paper rounds to 175B.",
}

model {
  id = "bloom-176b", name = "BLOOM 176B", family = "bloom",
  -- transformers' BloomAttention: "self.query_key_value = nn.Linear(
  -- self.hidden_size, 3 * self.hidden_size, bias=True)"
  split_proj = "none",
  layers = 70, hidden = 14336, heads = 112, kv_heads = 112, head_dim = 128,
  ffn_hidden = 57344, ffn_gated = false, vocab = 250880,
  tied_embeddings = true, linear_bias = true, qkv_bias = true,
  norm = "layer", max_seq = 2048, positions = "alibi",
  params_b = 176.247271424,
  source = "bigscience/bloom config.json (n_layer 70, hidden_size 14336, "
        .. "n_head 112, vocab_size 250880); BigScience 2022 "
        .. "(arXiv:2211.05100) Table 3; 176,247,271,424 parameters",
  notes = "ALiBi positions (no position table); the embedding LayerNorm "
       .. "(28,672 parameters) is not counted by the engine.",
}
