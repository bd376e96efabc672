-- NVIDIA Nemotron-4: a dense decoder with grouped-query attention, rope,
-- LayerNorm and a plain (ungated) MLP whose activation is squared ReLU,
-- relu(x)^2 (ffn_act "relu2"), no biases, untied input and output
-- embeddings over a 256,000-token vocabulary.
--
-- Shapes: NeMo nemo/collections/llm/gpt/model/nemotron.py, NemotronConfig
-- ("normalization: str = \"LayerNorm\"", "activation_func: Callable =
-- squared_relu", "position_embedding_type: str = \"rope\"",
-- "share_embeddings_and_output_weights: bool = False", "add_bias_linear:
-- bool = False", "rotary_percent: float = 0.5") and its Nemotron4Config15B
-- and Nemotron4Config340B; the vocabulary from NeMo's performance scripts
-- (scripts/performance/llm/pretrain_nemotron4_340b.py: "get_nmt_tokenizer,
-- library=\"null\", model_name=\"NullTokenizer\", vocab_size=256000").
-- Rope turns half of each head (rotary_percent 0.5), which the catalog's
-- positions cannot state: priced as rope over the whole head.

local nemo = "NeMo nemo/collections/llm/gpt/model/nemotron.py "

local function nemotron4(t)
  t.family = "nemotron"
  -- Megatron-Core's fused linear_qkv and linear_fc1 (the NeMo model);
  -- transformers' NemotronAttention keeps q_proj, k_proj, v_proj apart.
  t.split_proj = "none"
  t.kv_heads = 8   -- "num_query_groups: Optional[int] = 8"
  -- kv_channels None: head_dim = hidden / heads (128 and 192)
  t.ffn_gated = false
  t.ffn_act = "relu2"
  t.vocab = 256000
  t.tied_embeddings = false
  t.norm = "layer"
  t.max_seq = 4096
  return model(t)
end

nemotron4 { id = "nemotron4-15b", name = "Nemotron-4 15B",
  layers = 32, hidden = 6144, heads = 48, ffn_hidden = 24576,
  params_b = 15.6,
  source = nemo .. "Nemotron4Config15B: \"num_layers: int = 32\", "
        .. "\"hidden_size: int = 6144\", \"ffn_hidden_size: int = 24576\", "
        .. "\"num_attention_heads: int = 48\", \"num_query_groups: "
        .. "Optional[int] = 8\", \"seq_length: int = 4096\"",
  notes = "Engine count 15.63B: 3.15B in the two 256000 x 6144 embedding "
       .. "tables and 12.48B in the layers (the 15B of the name)." }

nemotron4 { id = "nemotron4-340b", name = "Nemotron-4 340B",
  layers = 96, hidden = 18432, heads = 96, ffn_hidden = 73728,
  params_b = 341.0,
  source = nemo .. "Nemotron4Config340B: \"num_layers: int = 96\", "
        .. "\"hidden_size: int = 18432\", \"ffn_hidden_size: int = "
        .. "73728\", \"num_attention_heads: int = 96\", "
        .. "\"num_query_groups: Optional[int] = 8\", \"seq_length: int = "
        .. "4096\"",
  notes = "Engine count 341.03B: 9.44B in the two 256000 x 18432 "
       .. "embedding tables and 331.59B in the layers (96 heads of 192, "
       .. "8 KV heads); the 340B of the name." }
