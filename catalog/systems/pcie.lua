-- Eight PCIe cards in one host, no NVLink switch.
--
-- pcie-8x is the generic answer to "eight PCIe cards on one host": it uses the
-- L40S because that card has no NVLink at all (H100 PCIe cards come with
-- optional NVLink bridges in pairs, which a "no NVLink" box would hide).
-- The host CPUs and memory of these boxes are not fixed by any product
-- spec: the figures are a typical dual-socket configuration, with the
-- bandwidth derived as sockets x channels x transfer rate x 8 B.

system {
  id = "pcie-8x", name = "8x L40S PCIe server (no NVLink)", gpu = "l40s", gpus = 8,
  scaleup = "pcie4",
  nics = 0,
  host_memory = "1TB", host_mem_bw = "614.4GB/s",
  cpu = "2x Intel Xeon Scalable gen 4 (typical)",
  cpu_vendor = "intel",
  source = "L40S as catalog/gpus; host figures assumed (2 x 8 channels DDR5-4800)",
  notes = "Standalone box (nics = 0). Clusters of L20/L40S are commonly paired "
       .. "with 200G networking (a 2023 brokerage note); add NICs in a user "
       .. "catalog for a multi-node setup.",
}

system {
  id = "pcie-8x-h100", name = "8x H100 PCIe server", gpu = "h100-pcie", gpus = 8,
  scaleup = "pcie5",
  nics = 0,
  host_memory = "2TB", host_mem_bw = "614.4GB/s",
  cpu = "2x Intel Xeon Scalable gen 4 (typical)",
  cpu_vendor = "intel",
  source = "H100 PCIe as catalog/gpus; host figures assumed (2 x 8 channels DDR5-4800)",
  notes = "Cards may be bridged in pairs (nvlink-bridge, 600 GB/s bidir); the "
       .. "8-way collective still runs over PCIe, so the node fabric is pcie5.",
}

system {
  id = "pcie-8x-4090", name = "8x RTX 4090 server", gpu = "rtx-4090", gpus = 8,
  scaleup = "pcie4",
  nics = 0,
  host_memory = "512GB", host_mem_bw = "409.6GB/s",
  cpu = "2x AMD EPYC 7003 (typical)",
  cpu_vendor = "amd",
  source = "RTX 4090 as catalog/gpus; host figures assumed (2 x 8 channels DDR4-3200)",
  notes = "GeForce drivers disable PCIe P2P: every transfer is staged through "
       .. "host memory (crosses_cpu on the pcie fabrics).",
}

system {
  id = "pcie-8x-5090", name = "8x RTX 5090 server", gpu = "rtx-5090", gpus = 8,
  scaleup = "pcie5",
  nics = 0,
  host_memory = "768GB", host_mem_bw = "921.6GB/s",
  cpu = "2x AMD EPYC 9004 (typical)",
  cpu_vendor = "amd",
  source = "RTX 5090 as catalog/gpus; host figures assumed (2 x 12 channels DDR5-4800)",
}
