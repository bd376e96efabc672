-- Sparse mixture-of-experts models other than Qwen's.
--
-- Mixtral's split_proj "both": transformers' MixtralAttention is
-- MistralAttention, q_proj, k_proj and v_proj nn.Linear each (as Llama's,
-- models/llama.lua); its experts (w1, w3) are priced as grouped GEMMs.

model {
  id = "mixtral-8x7b", name = "Mixtral 8x7B", family = "mixtral",
  split_proj = "both",
  layers = 32, hidden = 4096, heads = 32, kv_heads = 8, head_dim = 128,
  ffn_hidden = 14336, ffn_gated = true, vocab = 32000,
  tied_embeddings = false, qkv_bias = false, norm = "rms", max_seq = 32768,
  moe = { experts = 8, top_k = 2, shared_experts = 0, ffn_hidden = 14336,
          dense_layers = 0 },
  params_b = 46.7, active_params_b = 12.9,
  source = "mistralai/Mixtral-8x7B-v0.1 config.json (num_local_experts 8, "
        .. "num_experts_per_tok 2, intermediate_size 14336 per expert); "
        .. "Jiang et al. 2024 (arXiv:2401.04088): 47B total, 13B active; "
        .. "Mistral AI announcement: 46.7B total, 12.9B per token",
  notes = "Exact count 46,702,792,704 total, 12,879,925,248 active (both "
       .. "embedding matrices counted active).",
}

-- Mixtral 8x22B: asked of serving ("does it fit on 4 H200 at 32k?") and
-- answered "unknown model (did you mean mixtral-8x7b?)".  The shape is
-- the one validation/cases.json already prices for its Megatron model-zoo
-- rows (mzoo-bp-h100-mixtral-8x22b-*), from that repository's
-- model_configs/benchmarking/Mixtral-8x22B.yaml.
model {
  id = "mixtral-8x22b", name = "Mixtral 8x22B", family = "mixtral",
  split_proj = "both",
  layers = 56, hidden = 6144, heads = 48, kv_heads = 8, head_dim = 128,
  ffn_hidden = 16384, ffn_gated = true, vocab = 32000,
  tied_embeddings = false, qkv_bias = false, norm = "rms", max_seq = 65536,
  moe = { experts = 8, top_k = 2, shared_experts = 0, ffn_hidden = 16384,
          dense_layers = 0 },
  params_b = 141, active_params_b = 39,
  source = "github.com/yanring/Megatron-MoE-ModelZoo@e865051 model_configs/benchmarking/Mixtral-8x22B.yaml "
        .. "(--num-layers 56, --hidden-size 6144, --ffn-hidden-size 16384, "
        .. "--num-attention-heads 48, --num-query-groups 8, --swiglu, --num-experts 8, "
        .. "--moe-router-topk 2, --untie-embeddings-and-output-weights, "
        .. "Llama2Tokenizer: vocab 32000), as quoted in validation/cases.json "
        .. "mzoo-bp-h100-mixtral-8x22b-bf16-forcebal; mistralai/Mixtral-8x22B-v0.1 "
        .. "config.json max_position_embeddings 65536; Mistral AI announcement "
        .. "(mistral.ai/news/mixtral-8x22b): \"39B active parameters out of 141B\", "
        .. "\"64K tokens context window\"",
  notes = "Counted: 140.6B total, 39.2B active (attention 88.1M and two of the eight "
       .. "604M SwiGLU experts a layer, 56 layers, both 197M embedding matrices); "
       .. "the publisher's 141B and 39B are kept.",
}

model {
  id = "gpt-oss-120b", name = "gpt-oss-120b", family = "gpt_oss",
  layers = 36, hidden = 2880, heads = 64, kv_heads = 8, head_dim = 64,
  ffn_hidden = 2880, ffn_gated = true, ffn_clamp = true, vocab = 201088,
  tied_embeddings = false, qkv_bias = true, linear_bias = true, norm = "rms",
  max_seq = 131072,
  -- GptOssAttention's learned sink logit a head (notes): not priced, but
  -- vLLM takes sinks on FA3 or another backend, never FlashAttention-2
  -- (gpuplan.infer fa2_mixed).
  attn_sinks = true,
  -- YaRN factor 32 without an mscale: 0.1 ln 32 + 1.
  rope_attention_factor = 1.3466,
  moe = { experts = 128, top_k = 4, shared_experts = 0, ffn_hidden = 2880,
          dense_layers = 0 },
  sliding_window = { size = 128, layers = 18 },
  params_b = 116.83,
  expert_dtype = "mxfp4",
  source = "openai/gpt-oss-120b config.json (num_hidden_layers 36, hidden_size 2880, "
        .. "quantization_config {quant_method mxfp4, modules_to_not_convert "
        .. "self_attn, mlp.router, embed_tokens, lm_head}: expert_dtype mxfp4, the "
        .. "rest bf16 (torch_dtype bfloat16), "
        .. "num_attention_heads 64, num_key_value_heads 8, head_dim 64, "
        .. "num_local_experts 128, num_experts_per_tok 4, intermediate_size 2880, "
        .. "vocab_size 201088, tie_word_embeddings false, attention_bias true, "
        .. "swiglu_limit 7.0, rope_scaling {rope_type yarn, factor 32.0, "
        .. "original_max_position_embeddings 4096}, "
        .. "sliding_window 128, layer_types alternating sliding_attention / "
        .. "full_attention, max_position_embeddings 131072); OpenAI's gpt-oss model "
        .. "card, table 1 (gpt-oss-120b: 116.83B total, 5.13B active parameters)",
  notes = "18 of the 36 layers attend over the last 128 tokens (layer_types; "
       .. "Megatron-Core's window_attn_skip_freq = 2). Each attention head has a "
       .. "learned sink logit in its softmax (attention sinks; 64 parameters a "
       .. "layer, not priced). The experts are gated, their two halves clamped to "
       .. "7 first (swiglu_limit 7.0: ffn_clamp), with "
       .. "biases on every linear. Rope is YaRN-scaled (factor 32, no mscale "
       .. "given): cos and sin are multiplied by 0.1 ln 32 + 1 = 1.3466 "
       .. "(transformers' YaRN attention_factor; Megatron-Bridge's bridge sets "
       .. "yarn_rotary_scaling_factor 32.0 and yarn_mscale None, Megatron-Core's "
       .. "concentration factor): rope_attention_factor. Checkpoints ship the experts in MXFP4. The "
       .. "card's 5.13B active parameters count the output layer but not the "
       .. "embedding lookup (36 x 126.4M + 0.58B); the engine counts both "
       .. "(5.71B), so active_params_b is left unstated.",
}

-- DeepSeek-V3's network (config.json, source below), which DeepSeek-R1
-- shares: one shape for both ids, each table built afresh.
local function deepseek_v3(t)
  t.family = "deepseek_v3"
  t.layers, t.hidden, t.heads, t.kv_heads, t.head_dim = 61, 7168, 128, 128, 128
  t.ffn_hidden, t.ffn_gated, t.vocab = 18432, true, 129280
  t.tied_embeddings, t.qkv_bias, t.norm, t.max_seq = false, false, "rms", 163840
  -- group-limited routing: config.json "n_group": 8, "topk_group": 4,
  -- "topk_method": "noaux_tc" (each token's 8 experts from its best 4 of
  -- 8 groups of 32; report arXiv:2412.19437 section 2.1.2 "each token
  -- will be sent to at most M nodes", the groups being EP nodes)
  t.moe = { experts = 256, top_k = 8, shared_experts = 1, ffn_hidden = 2048,
            dense_layers = 3, groups = 8, group_top_k = 4 }
  t.mla = { q_lora_rank = 1536, kv_lora_rank = 512, qk_nope_head_dim = 128,
            qk_rope_head_dim = 64, v_head_dim = 128 }
  t.mtp_layers = 1
  t.params_b, t.active_params_b = 671, 37
  t.dtype = "fp8"
  return model(t)
end

deepseek_v3 {
  id = "deepseek-v3", name = "DeepSeek-V3",
  source = "deepseek-ai/DeepSeek-V3 config.json (n_routed_experts 256, "
        .. "n_shared_experts 1, first_k_dense_replace 3, n_group 8, topk_group 4, "
        .. "moe_intermediate_size 2048, MLA ranks 1536/512, rope 64, "
        .. "num_nextn_predict_layers 1, quantization_config {quant_method fp8, "
        .. "fmt e4m3, weight_block_size [128, 128]}: dtype fp8); its "
        .. "README_WEIGHTS.md: \"quantization_config: Describes the configuration "
        .. "for FP8 quantization\"; "
        .. "DeepSeek-V3 report arXiv:2412.19437 sections 2 and 4.2: 671B "
        .. "total, 37B activated per token",
  notes = "The 671B exclude the 14B multi-token-prediction module shipped "
       .. "in the checkpoint (685B in all); the engine leaves it out too. "
       .. "Engine active 37.55B counts the input embedding (0.93B); without "
       .. "the lookup it is 36.6B, which is what rounds to the paper's 37B. "
       .. "kv_heads/head_dim are unused under MLA (KV cache = 61 x 576 "
       .. "elements per token).",
}

-- DeepSeek-R1: DeepSeek-V3's network trained further (reasoning RL), the
-- same config.json; asked as "serve DeepSeek-R1 on 2 x 8 H100" and
-- answered "unknown model (did you mean deepseek-v3?)".
deepseek_v3 {
  id = "deepseek-r1", name = "DeepSeek-R1",
  source = "deepseek-ai/DeepSeek-R1 config.json: \"architectures\": "
        .. "[\"DeepseekV3ForCausalLM\"], \"model_type\": \"deepseek_v3\", "
        .. "first_k_dense_replace 3, hidden_size 7168, intermediate_size 18432, "
        .. "kv_lora_rank 512, max_position_embeddings 163840 -- DeepSeek-V3's "
        .. "(deepseek-v3 above), fp8 as released; DeepSeek-R1 report "
        .. "arXiv:2501.12948: trained from DeepSeek-V3-Base, 671B total, 37B "
        .. "activated",
  notes = "As deepseek-v3: the 14B multi-token-prediction module is left out; "
       .. "the R1 distills (Qwen, Llama) are dense models of their bases.",
}

-- Meta Llama 4 Maverick (text decoder; the checkpoint's vision tower is
-- not described).  Every layer: GQA attention 40 q / 8 kv heads of 128, and
-- an MLP that is either a dense SwiGLU of intermediate_size_mlp 16384 or
-- an MoE block of 128 (num_local_experts) routed SwiGLU experts of
-- intermediate_size 8192, top-1 (num_experts_per_tok 1), plus one shared
-- expert of the same width (transformers' Llama4TextMoe: "self.
-- shared_expert = Llama4TextMLP(config)").  Which layers are MoE:
-- transformers' Llama4TextModel "moe_layers ... list(range(
-- interleave_moe_layer_step - 1, num_hidden_layers,
-- interleave_moe_layer_step))", moe.layer_step here: 2, layers 1, 3, ...,
-- 47 (NeMo's Llama4Experts128Config "moe_layer_freq ... [0, 1] * 24").
-- Not priced: the chunked attention of three layers in four
-- (attention_chunk_size 8192: at 8192 tokens or fewer the same as full
-- causal attention).  Llama 4 Scout (16 experts, interleave_moe_layer_step
-- 1: every layer MoE) is left out: Meta's 109B total counts its vision
-- encoder, which this text-only entry would miss by 1.2B (107.8B).
model {
  id = "llama4-maverick", name = "Llama 4 Maverick 17B-128E",
  family = "llama4",
  layers = 48, hidden = 5120, heads = 40, kv_heads = 8, head_dim = 128,
  ffn_hidden = 16384, ffn_gated = true, vocab = 202048,
  tied_embeddings = false, qkv_bias = false, norm = "rms", max_seq = 1048576,
  moe = { experts = 128, top_k = 1, shared_experts = 1, ffn_hidden = 8192,
          layer_step = 2 },
  params_b = 400, active_params_b = 17,
  source = "meta-llama/Llama-4-Maverick-17B-128E config.json text_config "
        .. "(num_hidden_layers 48, hidden_size 5120, num_attention_heads 40, "
        .. "num_key_value_heads 8, head_dim 128, intermediate_size 8192, "
        .. "intermediate_size_mlp 16384, num_local_experts 128, "
        .. "num_experts_per_tok 1, interleave_moe_layer_step 2, "
        .. "vocab_size 202048, use_qk_norm false, "
        .. "max_position_embeddings 1048576); Meta's Llama 4 model card: "
        .. "17B activated, 400B total parameters",
  notes = "24 MoE layers (odd 0-based indices) and 24 dense ones.  Hand count: "
       .. "attention 48 x 62.9M = 3.02B; MoE 24 x (128 + 1) x 3 x 5120 x 8192 "
       .. "+ routers = 389.6B; dense 24 x 3 x 5120 x 16384 = 6.04B; embedding "
       .. "and head 2 x 202048 x 5120 = 2.07B: 400.7B total, 17.2B active "
       .. "(two experts' MLP in the 24 MoE layers).",
}

model {
  id = "nemotron-3-nano-30b-a3b", name = "NVIDIA Nemotron 3 Nano 30B-A3B",
  family = "nemotron_h",
  layers = 52, hidden = 2688, heads = 32, kv_heads = 2, head_dim = 128,
  ffn_hidden = 1856, ffn_gated = false, ffn_act = "relu2", vocab = 131072,
  tied_embeddings = false, norm = "rms", max_seq = 262144, positions = "none",
  hybrid_pattern = "MEMEM*EMEMEM*EMEMEM*EMEMEM*EMEMEM*EMEMEMEM*EMEMEMEME",
  mamba = { heads = 64, head_dim = 64, state = 128, groups = 8, conv = 4,
            chunk = 128 },
  moe = { experts = 128, top_k = 6, shared_experts = 1, ffn_hidden = 1856,
          shared_ffn_hidden = 3712 },
  params_b = 31.6, active_params_b = 3.6,
  source = "Megatron-Bridge Nemotron3NanoProvider at 2c2425a "
        .. "(src/megatron/bridge/models/nemotronh/nemotron_h_provider.py: "
        .. "hybrid_override_pattern, num_layers 52, hidden_size 2688, "
        .. "mamba_num_heads 64, kv_channels 128, mamba_state_dim 128, "
        .. "num_attention_heads 32, num_query_groups 2, mamba_head_dim 64, "
        .. "num_moe_experts 128, moe_ffn_hidden_size 1856, "
        .. "moe_shared_expert_intermediate_size 3712, moe_router_topk 6; "
        .. "NemotronHModelProvider mamba_num_groups 8, MambaModelProvider "
        .. "share_embeddings_and_output_weights False, normalization "
        .. "RMSNorm, gated_linear_unit False; MambaMixer d_conv 4, "
        .. "chunk_size 128); vocab_size 131072 from "
        .. "nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-BF16 config.json; totals "
        .. "from NVIDIA's Nemotron 3 release (\"Nemotron 3 Nano is a 3.2B "
        .. "active (3.6B with embeddings), 31.6B total parameter model\")",
  notes = "23 Mamba-2, 23 MoE and 6 attention layers, each its own layer "
       .. "with one pre-norm.  The experts' activation is squared ReLU "
       .. "(activation_func squared_relu: ffn_act relu2, ungated); the "
       .. "attention layers use no position embedding (positions none: "
       .. "MambaModelProvider \"position_embedding_type: "
       .. "Literal[\"learned_absolute\", \"rope\", \"none\"] = \"none\"\", "
       .. "at 2c2425a, which Nemotron3NanoProvider keeps).  nemotron3.md "
       .. "says 5 experts a token; the provider's moe_router_topk is 6, and it rounds the totals to \"3.5B active "
       .. "parameters and 30B parameters in total\".  Engine: 31.58B, "
       .. "3.58B active.  ffn_hidden is the provider's "
       .. "ffn_hidden_size; no layer is a dense MLP (no - in the pattern).",
}
