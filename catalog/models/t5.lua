-- Encoder-decoder models of the T5 family (Raffel et al. 2020, "Exploring
-- the Limits of Transfer Learning with a Unified Text-to-Text Transformer",
-- JMLR 21): an encoder stack of `encoder_layers` layers and a decoder stack
-- of `layers` layers with cross-attention, RMS-style T5LayerNorm (a gain,
-- no bias), no biases on the linears, no positional embedding but a
-- relative-position bias of rel_buckets x heads in the first layer of each
-- stack, and a shared token embedding.  The attention's inner width is
-- heads x d_kv (head_dim), which need not equal d_model.
--
--   T5 v1.0 (t5-3b):  ReLU MLP (d_ff), output layer tied to the embedding.
--   T5 v1.1 (T5+LM, T0, Flan-T5, mT5/mT0): gated-GELU MLP (wi_0, wi_1,
--     wo), output layer untied.
--
-- Shapes are the config.json fields of the Hugging Face repos (d_model ->
-- hidden, d_kv -> head_dim, d_ff -> ffn_hidden, num_layers ->
-- encoder_layers, num_decoder_layers -> layers, num_heads -> heads,
-- relative_attention_num_buckets -> rel_buckets, feed_forward_proj ->
-- ffn_gated / ffn_act); `gpuplan model import` reads them the same way.

model {
  id = "t5-3b", name = "T5 3B", family = "t5",
  layers = 24, encoder_layers = 24, hidden = 1024, heads = 32, kv_heads = 32,
  head_dim = 128, ffn_hidden = 16384, ffn_gated = false, ffn_act = "relu",
  vocab = 32128, tied_embeddings = true, qkv_bias = false, norm = "rms",
  rel_buckets = 32, max_seq = 512,
  params_b = 2.851598336,
  source = "google-t5/t5-3b config.json (d_model 1024, d_kv 128, d_ff 16384, "
        .. "num_layers 24, num_heads 32, feed_forward_proj relu, tied); "
        .. "2,851,598,336 parameters as KerasNLP's t5_3b preset lists them "
        .. "('2.85 billion parameters')",
  notes = "T5 v1.0: 32128 x 1024 shared embedding + 24 encoder layers of "
       .. "50,333,696 + 24 decoder layers of 67,111,936 + 2 x 32 x 32 "
       .. "bias + 2 final norms of 1024.",
}

model {
  id = "t0-3b", name = "T0 3B", family = "t5",
  layers = 24, encoder_layers = 24, hidden = 2048, heads = 32, kv_heads = 32,
  head_dim = 64, ffn_hidden = 5120, ffn_gated = true, ffn_act = "gelu",
  vocab = 32128, tied_embeddings = false, qkv_bias = false, norm = "rms",
  rel_buckets = 32, max_seq = 512,
  params_b = 2.849757184,
  source = "bigscience/T0_3B: fine-tuned from the LM-adapted T5 v1.1 XL "
        .. "(Sanh et al. 2022, 'Multitask Prompted Training Enables "
        .. "Zero-Shot Task Generalization', arXiv:2110.08207: T0 "
        .. "starts from T5+LM); T5 v1.1 XL shape (d_model 2048, d_kv 64, "
        .. "d_ff 5120, 24+24 layers, 32 heads, gated-gelu, untied); "
        .. "2,849,757,184 parameters as KerasHub's t5_1.1_xl preset lists "
        .. "them",
  notes = "Not the shape of t5-3b (T5 v1.0: d_model 1024, d_ff 16384, ReLU, "
       .. "tied), although both hold 2.85B parameters.",
}

model {
  id = "flan-t5-xxl", name = "Flan-T5 XXL", family = "t5",
  layers = 24, encoder_layers = 24, hidden = 4096, heads = 64, kv_heads = 64,
  head_dim = 64, ffn_hidden = 10240, ffn_gated = true, ffn_act = "gelu",
  vocab = 32128, tied_embeddings = false, qkv_bias = false, norm = "rms",
  rel_buckets = 32, max_seq = 512,
  params_b = 11.135332352,
  source = "google/flan-t5-xxl config.json (d_model 4096, d_kv 64, d_ff "
        .. "10240, num_layers 24, num_decoder_layers 24, num_heads 64, "
        .. "feed_forward_proj gated-gelu, tie_word_embeddings false): the "
        .. "T5 v1.1 XXL shape (Chung et al. 2022, 'Scaling "
        .. "Instruction-Finetuned Language Models', arXiv:2210.11416); "
        .. "11,135,332,352 parameters as KerasHub's t5_1.1_xxl preset "
        .. "lists them",
}
