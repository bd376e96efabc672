-- Price ranges quoted by the seed selection guides (blog posts; the text
-- carries no date, so date = "undated"). provider_kind = "guide": a rule of
-- thumb, not an offer. Each range is its own entry with its market: "cn"
-- for the China-market CNY ranges (A100 80GB 8-20, H800 20-40 CNY per
-- card-hour: "A100 80GB 单卡每小时多在 8~20 元，H800 大致 20~40 元"),
-- "overseas" for the guide's USD range ("境外 H100 常见 2~4 美元/卡/小时").
-- Kept so scenario scripts can reproduce the guides' arithmetic and compare
-- with the dated offers in the other price files.

price {
  id = "a100-sxm-80gb/guide/cn", gpu = "a100-sxm-80gb",
  provider = "seed selection guide", provider_kind = "guide", region = "cn",
  price = "14CNY/h", range = { "8CNY/h", "20CNY/h" },
  date = "undated", source = "seed guide (multimodal fine-tuning GPU selection guide)",
  notes = "Partly supported: zhitaoyun.cn gives 8-12 CNY/h for the 2023 market; "
       .. "the 20 CNY upper bound was not found elsewhere.",
}
price {
  id = "h800-sxm/guide/cn", gpu = "h800-sxm",
  provider = "seed selection guide", provider_kind = "guide", region = "cn",
  price = "30CNY/h", range = { "20CNY/h", "40CNY/h" },
  date = "undated", source = "seed guide (multimodal fine-tuning GPU selection guide)",
  notes = "Unverified: no other source for H800 rental prices was found.",
}
price {
  id = "h100-sxm/guide/overseas", gpu = "h100-sxm",
  provider = "seed selection guide", provider_kind = "guide", region = "overseas",
  price = "$3/h", range = { "$2/h", "$4/h" },
  date = "undated", source = "seed guide (multimodal fine-tuning GPU selection guide)",
  notes = "Consistent with 2026 specialty and long-tail offers ($1.49-3.99); "
       .. "hyperscaler on-demand is higher ($3.50-5.00).",
}
