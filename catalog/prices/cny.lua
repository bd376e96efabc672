-- Rental prices in China (CNY per GPU-hour).
--
-- No sourced CNY price for H800 or H20 was found; the H800 figure below is
-- the seed guide's (catalog/prices/guides.lua), unverified.

price {
  id = "a100-sxm-80gb/cn-market-2023/cn", gpu = "a100-sxm-80gb",
  provider = "China rental market (article)", provider_kind = "marketplace", region = "cn",
  price = "10CNY/h", range = { "8CNY/h", "12CNY/h" },
  date = "2023", source = "zhitaoyun.cn, published 2025-04-19, describing the 2023 market "
                       .. "(A100/A800 high-end: 8-12 CNY per GPU-hour)",
}
price {
  id = "a800-sxm-80gb/cn-market-2023/cn", gpu = "a800-sxm-80gb",
  provider = "China rental market (article)", provider_kind = "marketplace", region = "cn",
  price = "10CNY/h", range = { "8CNY/h", "12CNY/h" },
  date = "2023", source = "zhitaoyun.cn, published 2025-04-19, describing the 2023 market "
                       .. "(A100/A800 high-end: 8-12 CNY per GPU-hour)",
  notes = "The article quotes A100 and A800 together.",
}
