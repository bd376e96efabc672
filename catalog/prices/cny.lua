-- Rental prices in China (CNY per GPU-hour), region "cn": the China market,
-- where the export variants (A800, H800, H20, L20) are rented and H100/H200
-- mostly are not. Each entry is dated as its source is. The seed guides'
-- rules of thumb are in guides.lua (provider_kind "guide").

-- A 2023 market survey.
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

-- AutoDL (autodl.com), a China GPU cloud billed per second, on-demand
-- single-GPU container prices. Read from AutoDL's price page as transcribed
-- in the research notes of the open-source zjw49246/gpu-hire project
-- (docs/autodl-provider-design.md, researched 2026-03-28): member prices,
-- "about 95% of list" (会员价，约 9.5 折), each given as "about".
local AUTODL_SRC = "AutoDL price page (autodl.com) as transcribed in zjw49246/gpu-hire "
                .. "docs/autodl-provider-design.md (researched 2026-03-28)"
local AUTODL_NOTE = "Member price, about 95% of AutoDL's list price; on-demand, "
                 .. "per-second billing, one GPU of a container instance."
local function autodl(gpu, cny, note)
  price {
    id = gpu .. "/autodl/cn", gpu = gpu,
    provider = "AutoDL", provider_kind = "specialty", region = "cn",
    price = cny .. "CNY/h", date = "2026-03", source = AUTODL_SRC,
    notes = note and (AUTODL_NOTE .. " " .. note) or AUTODL_NOTE,
  }
end
autodl("h20", "6.98", "AutoDL lists the card as H20-NVLink, 96 GB (the HGX part).")
autodl("h800-sxm", "8.88", "AutoDL lists H800-80G; AutoDL offers no H100 (export control).")
autodl("a100-sxm-80gb", "6.68", "Listed as A100 SXM4 80GB.")
autodl("a800-sxm-80gb", "4.98", "AutoDL lists A800-80GB-NVLink; the form factor is not "
       .. "stated, SXM assumed from the NVLink.")
autodl("l20", "3.68")
autodl("rtx-5090", "2.88")
autodl("v100-sxm2-32gb", "2.28", "AutoDL lists V100-SXM2-32GB.")
autodl("rtx-4090", "1.98")
