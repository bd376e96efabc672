-- Vision-language models: a ViT tower, a projector, and a decoder LLM.
--
-- Tower conventions (engine/model.c): ViT linears carry biases, norms are
-- counted as LayerNorm (2 * hidden), the patch embedding is
-- 3 * temporal_patch * patch^2 * hidden (temporal_patch 2 for Qwen2-VL and
-- Qwen2.5-VL: one patch spans two frames, a still image is repeated), the
-- tower's position/class embeddings (< 1M) are not counted.
--
-- Qwen2-VL / Qwen2.5-VL read images at their native resolution: an H x W
-- image becomes (H/14)(W/14) patches and (H/28)(W/28) LLM tokens after the
-- 2x2 merge (Wang et al. 2024, arXiv:2409.12191 section 2.1).  image_size
-- 448 is a representative square setting (256 tokens), not a limit.
--
-- split_proj "both": the decoder LLM's modules (LLaVA-1.5's Vicuna is
-- transformers' Llama, Qwen2-VL's and Qwen2.5-VL's are Qwen2's: q_proj,
-- k_proj, v_proj, gate_proj, up_proj each an nn.Linear).

model {
  id = "qwen2-vl-7b", name = "Qwen2-VL 7B", family = "qwen2_vl",
  split_proj = "both",
  layers = 28, hidden = 3584, heads = 28, kv_heads = 4, head_dim = 128,
  ffn_hidden = 18944, ffn_gated = true, vocab = 152064,
  tied_embeddings = false, qkv_bias = true, norm = "rms", max_seq = 32768,
  vision = { layers = 32, hidden = 1280, heads = 16, ffn_hidden = 5120,
             ffn_gated = false, image_size = 448, patch_size = 14,
             merge = 2, temporal_patch = 2, tokens_per_image = 256,
             projector_params = 44573184 },
  params_b = 8.29,
  source = "Qwen/Qwen2-VL-7B-Instruct config.json (vision_config depth 32, "
        .. "embed_dim 1280, mlp_ratio 4, num_heads 16, patch_size 14, "
        .. "spatial_merge_size 2, temporal_patch_size 2) and model card "
        .. "(8.29B); arXiv:2409.12191 Table 1 (675M ViT)",
  notes = "params_b includes the vision tower (0.676B) and the merger "
       .. "(LayerNorm + MLP 5120->5120->3584 = 44.6M, in projector_params).",
}

model {
  id = "qwen2-vl-72b", name = "Qwen2-VL 72B", family = "qwen2_vl",
  split_proj = "both",
  layers = 80, hidden = 8192, heads = 64, kv_heads = 8, head_dim = 128,
  ffn_hidden = 29568, ffn_gated = true, vocab = 152064,
  tied_embeddings = false, qkv_bias = true, norm = "rms", max_seq = 32768,
  vision = { layers = 32, hidden = 1280, heads = 16, ffn_hidden = 5120,
             ffn_gated = false, image_size = 448, patch_size = 14,
             merge = 2, temporal_patch = 2, tokens_per_image = 256,
             projector_params = 68170752 },
  params_b = 73.4,
  source = "Qwen/Qwen2-VL-72B-Instruct config.json and model card (73.4B); "
        .. "arXiv:2409.12191 Table 1 (675M ViT + Qwen2-72B)",
  notes = "params_b includes the vision tower; merger MLP "
       .. "5120->5120->8192 = 68.2M.",
}

model {
  id = "qwen2.5-vl-7b", name = "Qwen2.5-VL 7B", family = "qwen2_5_vl",
  split_proj = "both",
  layers = 28, hidden = 3584, heads = 28, kv_heads = 4, head_dim = 128,
  ffn_hidden = 18944, ffn_gated = true, vocab = 152064,
  tied_embeddings = false, qkv_bias = true, norm = "rms", max_seq = 128000,
  vision = { layers = 32, hidden = 1280, heads = 16, ffn_hidden = 3420,
             ffn_gated = true, image_size = 448, patch_size = 14,
             merge = 2, temporal_patch = 2, tokens_per_image = 256,
             projector_params = 44573184 },
  params_b = 8.29,
  source = "Qwen/Qwen2.5-VL-7B-Instruct config.json (vision_config "
        .. "hidden_size 1280, intermediate_size 3420, SwiGLU, depth 32, "
        .. "out_hidden_size 3584, window_size 112, fullatt_block_indexes "
        .. "[7,15,23,31]) and model card (8.29B); arXiv:2502.13923 Table 1",
  notes = "params_b includes the vision tower.  The Qwen2.5-VL ViT uses "
       .. "RMSNorm (the engine's LayerNorm count is 82K high) and window "
       .. "attention in 28 of 32 blocks.",
}

model {
  id = "qwen2.5-vl-72b", name = "Qwen2.5-VL 72B", family = "qwen2_5_vl",
  split_proj = "both",
  layers = 80, hidden = 8192, heads = 64, kv_heads = 8, head_dim = 128,
  ffn_hidden = 29568, ffn_gated = true, vocab = 152064,
  tied_embeddings = false, qkv_bias = true, norm = "rms", max_seq = 128000,
  vision = { layers = 32, hidden = 1280, heads = 16, ffn_hidden = 3456,
             ffn_gated = true, image_size = 448, patch_size = 14,
             merge = 2, temporal_patch = 2, tokens_per_image = 256,
             projector_params = 68170752 },
  params_b = 73.4,
  source = "Qwen/Qwen2.5-VL-72B-Instruct config.json (vision_config "
        .. "intermediate_size 3456, out_hidden_size 8192) and model card "
        .. "(73.4B); arXiv:2502.13923 Table 1",
  notes = "params_b includes the vision tower.",
}

model {
  id = "llava-1.5-7b", name = "LLaVA-1.5 7B", family = "llava",
  split_proj = "both",
  layers = 32, hidden = 4096, heads = 32, kv_heads = 32, head_dim = 128,
  ffn_hidden = 11008, ffn_gated = true, vocab = 32000,
  tied_embeddings = false, qkv_bias = false, norm = "rms", max_seq = 4096,
  vision = { layers = 24, hidden = 1024, heads = 16, ffn_hidden = 4096,
             ffn_gated = false, image_size = 336, patch_size = 14,
             merge = 1, tokens_per_image = 576,
             projector_params = 20979712 },
  params_b = 7.06,
  source = "liuhaotian/llava-v1.5-7b config.json (Vicuna-7B v1.5 = Llama 2 "
        .. "7B shape, mm_projector_type mlp2x_gelu, "
        .. "openai/clip-vit-large-patch14-336, mm_vision_select_layer -2); "
        .. "Liu et al. 2023 (arXiv:2310.03744); llava-hf/llava-1.5-7b-hf "
        .. "lists 7.06B",
  notes = "params_b includes CLIP ViT-L/14-336 (303.5M with its position "
       .. "embeddings) and the 2-layer MLP projector 1024->4096->4096 "
       .. "(21.0M).  576 = (336/14)^2 image tokens (CLS dropped).",
}

model {
  id = "llava-1.5-13b", name = "LLaVA-1.5 13B", family = "llava",
  split_proj = "both",
  layers = 40, hidden = 5120, heads = 40, kv_heads = 40, head_dim = 128,
  ffn_hidden = 13824, ffn_gated = true, vocab = 32000,
  tied_embeddings = false, qkv_bias = false, norm = "rms", max_seq = 4096,
  vision = { layers = 24, hidden = 1024, heads = 16, ffn_hidden = 4096,
             ffn_gated = false, image_size = 336, patch_size = 14,
             merge = 1, tokens_per_image = 576,
             projector_params = 31467520 },
  params_b = 13.4,
  source = "liuhaotian/llava-v1.5-13b config.json (Vicuna-13B v1.5 = Llama "
        .. "2 13B shape, mlp2x_gelu projector, CLIP ViT-L/14-336); "
        .. "arXiv:2310.03744; llava-hf/llava-1.5-13b-hf lists 13.4B",
  notes = "params_b includes the vision tower and the projector "
       .. "1024->5120->5120 (31.5M).",
}
