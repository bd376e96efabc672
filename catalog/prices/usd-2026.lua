-- Rental prices in USD per GPU-hour, 2026 snapshots. Each entry is dated only
-- as its source is. `price` is the middle of the published range where a
-- range is given. provider_kind: hyperscaler (AWS/GCP/Azure/OCI), specialty
-- (GPU clouds: Lambda, CoreWeave, Spheron...), marketplace (aggregated or
-- community/long-tail offers, spot).

-- mercatus-ai.com, May 2026: ranges per provider tier.
price {
  id = "a100-sxm-80gb/hyperscaler/us", gpu = "a100-sxm-80gb",
  provider = "hyperscalers (survey)", provider_kind = "hyperscaler", region = "us",
  price = "$2.25/h", range = { "$1.50/h", "$3.00/h" },
  date = "2026-05", source = "mercatus-ai.com GPU pricing survey, May 2026",
}
price {
  id = "a100-sxm-80gb/specialty/us", gpu = "a100-sxm-80gb",
  provider = "specialty GPU clouds (survey)", provider_kind = "specialty", region = "us",
  price = "$1.30/h", range = { "$1.10/h", "$1.50/h" },
  date = "2026-05", source = "mercatus-ai.com GPU pricing survey, May 2026",
}
price {
  id = "a100-sxm-80gb/long-tail/us", gpu = "a100-sxm-80gb",
  provider = "long-tail providers (survey)", provider_kind = "marketplace", region = "us",
  price = "$0.95/h", range = { "$0.80/h", "$1.10/h" },
  date = "2026-05", source = "mercatus-ai.com GPU pricing survey, May 2026",
}
price {
  id = "h100-sxm/hyperscaler/us", gpu = "h100-sxm",
  provider = "hyperscalers (survey)", provider_kind = "hyperscaler", region = "us",
  price = "$4.25/h", range = { "$3.50/h", "$5.00/h" },
  date = "2026-05", source = "mercatus-ai.com GPU pricing survey, May 2026",
}
price {
  id = "h100-sxm/specialty/us", gpu = "h100-sxm",
  provider = "specialty GPU clouds (survey)", provider_kind = "specialty", region = "us",
  price = "$3.00/h", range = { "$2.50/h", "$3.50/h" },
  date = "2026-05", source = "mercatus-ai.com GPU pricing survey, May 2026",
}
price {
  id = "h100-sxm/long-tail/us", gpu = "h100-sxm",
  provider = "long-tail providers (survey)", provider_kind = "marketplace", region = "us",
  price = "$2.25/h", range = { "$1.99/h", "$2.50/h" },
  date = "2026-05", source = "mercatus-ai.com GPU pricing survey, May 2026",
}
price {
  id = "h200-sxm/hyperscaler/us", gpu = "h200-sxm",
  provider = "hyperscalers (survey)", provider_kind = "hyperscaler", region = "us",
  price = "$5.75/h", range = { "$4.50/h", "$7.00/h" },
  date = "2026-05", source = "mercatus-ai.com GPU pricing survey, May 2026",
}
price {
  id = "h200-sxm/specialty/us", gpu = "h200-sxm",
  provider = "specialty GPU clouds (survey)", provider_kind = "specialty", region = "us",
  price = "$4.00/h", range = { "$3.50/h", "$4.50/h" },
  date = "2026-05", source = "mercatus-ai.com GPU pricing survey, May 2026",
}
price {
  id = "h200-sxm/long-tail/us", gpu = "h200-sxm",
  provider = "long-tail providers (survey)", provider_kind = "marketplace", region = "us",
  price = "$3.00/h", range = { "$2.50/h", "$3.50/h" },
  date = "2026-05", source = "mercatus-ai.com GPU pricing survey, May 2026",
}

-- pricegpu.pages.dev, "early 2026": aggregated ranges.
price {
  id = "a100-sxm-80gb/pricegpu/global", gpu = "a100-sxm-80gb",
  provider = "pricegpu.pages.dev aggregate", provider_kind = "marketplace", region = "global",
  price = "$1.99/h", range = { "$1.49/h", "$2.49/h" },
  date = "2026-01", source = "pricegpu.pages.dev (page says early 2026)",
  notes = "Month not stated; 2026-01 stands for 'early 2026'.",
}
price {
  id = "h100-sxm/pricegpu/global", gpu = "h100-sxm",
  provider = "pricegpu.pages.dev aggregate", provider_kind = "marketplace", region = "global",
  price = "$3.24/h", range = { "$2.49/h", "$3.99/h" },
  date = "2026-01", source = "pricegpu.pages.dev (page says early 2026)",
  notes = "Month not stated; 2026-01 stands for 'early 2026'.",
}
price {
  id = "h100-sxm/aiapiplaybook/global", gpu = "h100-sxm",
  provider = "aiapiplaybook.com survey", provider_kind = "marketplace", region = "global",
  price = "$1.80/h", range = { "$1.49/h", "$2.10/h" },
  date = "2026-01-15", source = "aiapiplaybook.com, 2026-01-15",
  notes = "The page says 'H100' without the form factor; SXM assumed.",
}

-- RunPod.
price {
  id = "h100-sxm/runpod-community/global", gpu = "h100-sxm",
  provider = "RunPod community cloud", provider_kind = "marketplace", region = "global",
  price = "$2.10/h", range = { "$1.80/h", "$2.40/h" },
  date = "2026-05-22", source = "spheron.network blog, 2026-05-22 (RunPod prices)",
}
price {
  id = "h100-sxm/runpod-secure/global", gpu = "h100-sxm",
  provider = "RunPod secure cloud", provider_kind = "specialty", region = "global",
  price = "$2.69/h",
  date = "2026-05-22", source = "spheron.network blog, 2026-05-22 (RunPod prices)",
}
price {
  id = "h100-pcie/runpod-secure/global", gpu = "h100-pcie",
  provider = "RunPod secure cloud", provider_kind = "specialty", region = "global",
  price = "$2.79/h",
  date = "2026-05-22", source = "spheron.network blog, 2026-05-22 (RunPod prices)",
}
price {
  id = "rtx-4090/runpod/global", gpu = "rtx-4090",
  provider = "RunPod", provider_kind = "marketplace", region = "global",
  price = "$0.60/h", range = { "$0.34/h", "$0.60/h" },
  date = "2026-03", source = "deploybase.ai 'RunPod GPU Pricing' (March 2026): spot "
                         .. "$0.34, on-demand $0.60",
  notes = "price = on-demand; range low = spot (preemptible).",
}
price {
  id = "rtx-5090/runpod/global", gpu = "rtx-5090",
  provider = "RunPod", provider_kind = "marketplace", region = "global",
  price = "$1.22/h", range = { "$0.69/h", "$1.22/h" },
  date = "2026-03", source = "deploybase.ai 'RunPod GPU Pricing' (March 2026)",
  notes = "price = on-demand; range low = spot (preemptible).",
}
price {
  id = "l40s/runpod/global", gpu = "l40s",
  provider = "RunPod", provider_kind = "marketplace", region = "global",
  price = "$1.40/h", range = { "$0.79/h", "$1.40/h" },
  date = "2026-03", source = "deploybase.ai 'RunPod GPU Pricing' (March 2026)",
  notes = "price = on-demand; range low = spot (preemptible).",
}
price {
  id = "l4/runpod/global", gpu = "l4",
  provider = "RunPod", provider_kind = "marketplace", region = "global",
  price = "$0.78/h", range = { "$0.44/h", "$0.78/h" },
  date = "2026-03", source = "deploybase.ai 'RunPod GPU Pricing' (March 2026)",
  notes = "price = on-demand; range low = spot (preemptible).",
}
price {
  id = "a100-pcie-80gb/runpod/global", gpu = "a100-pcie-80gb",
  provider = "RunPod", provider_kind = "marketplace", region = "global",
  price = "$2.10/h", range = { "$1.19/h", "$2.10/h" },
  date = "2026-03", source = "deploybase.ai 'RunPod GPU Pricing' (March 2026)",
  notes = "price = on-demand; range low = spot (preemptible).",
}
price {
  id = "b200/runpod/global", gpu = "b200",
  provider = "RunPod", provider_kind = "marketplace", region = "global",
  price = "$10.57/h", range = { "$5.98/h", "$10.57/h" },
  date = "2026-03", source = "deploybase.ai 'RunPod GPU Pricing' (March 2026)",
  notes = "price = on-demand; range low = spot (preemptible). The page "
       .. "lists B200 as 192GB.",
}

-- Blackwell and H200 on specialty clouds.
price {
  id = "b200/spheron/global", gpu = "b200",
  provider = "Spheron", provider_kind = "specialty", region = "global",
  price = "$6.03/h", range = { "$2.25/h", "$6.03/h" },
  date = "2026-03-17", source = "spheron.network 'NVIDIA H200 vs B200 vs GB200' and "
                            .. "'NVIDIA B200 Guide' (March 2026): on-demand $6.03, spot $2.25",
}
price {
  id = "h200-sxm/spheron/global", gpu = "h200-sxm",
  provider = "Spheron", provider_kind = "specialty", region = "global",
  price = "$4.54/h",
  date = "2026-03-17", source = "spheron.network 'NVIDIA H200 vs B200 vs GB200' (March 2026)",
}
price {
  id = "gb200/spheron/global", gpu = "gb200",
  provider = "Spheron", provider_kind = "specialty", region = "global",
  price = "$4.54/h",
  date = "2026-03-17", source = "spheron.network 'NVIDIA H200 vs B200 vs GB200' (March 2026): "
                            .. "$9.08/h per GB200 superchip",
  notes = "Sold per superchip (1 Grace + 2 GPUs): $9.08 / 2 GPUs = $4.54 per GPU-hour.",
}
price {
  id = "b200/specialty/global", gpu = "b200",
  provider = "specialty GPU clouds (survey)", provider_kind = "specialty", region = "global",
  price = "$5.25/h", range = { "$4.50/h", "$6.00/h" },
  date = "2026-03-11", source = "lyceum.technology 'NVIDIA B200 GPU Cloud Pricing 2026' "
                            .. "(on-demand on specialized clouds $4.50-6.00)",
}
price {
  id = "b200/hyperscaler/us", gpu = "b200",
  provider = "AWS (survey)", provider_kind = "hyperscaler", region = "us",
  price = "$11.12/h", range = { "$8.00/h", "$14.24/h" },
  date = "2026-06", source = "packet.ai 'GPU Pricing Models Compared 2026' (AWS H200/B200 "
                         .. "$8.00-14.24/h)",
  notes = "The source gives one range for H200 and B200 together; a vendor blog.",
}
price {
  id = "h200-sxm/gcp/us", gpu = "h200-sxm",
  provider = "Google Cloud", provider_kind = "hyperscaler", region = "us",
  price = "$10/h",
  date = "2025-08", source = "jax-ml/scaling-book gpus.md (H200 on GCP ~$10/h)",
  notes = "Approximate figure in a 2025 text; dated to the snapshot read.",
}

-- AMD (undated pages).
price {
  id = "mi325x/survey/global", gpu = "mi325x",
  provider = "awesomeagents.ai listing", provider_kind = "marketplace", region = "global",
  price = "$2.12/h", range = { "$2.00/h", "$2.25/h" },
  date = "undated", source = "awesomeagents.ai/hardware/amd-mi325x",
}
price {
  id = "mi300x/survey/global", gpu = "mi300x",
  provider = "gpu.blog listing", provider_kind = "marketplace", region = "global",
  price = "$1.78/h", range = { "$1.71/h", "$1.85/h" },
  date = "undated", source = "gpu.blog MI300X page",
  notes = "The same site's tensor figures are wrong (see catalog/gpus); price only.",
}
