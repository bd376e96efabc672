-- Predict a `collective` validation case (validation/SCHEMA.md):
-- nccl-tests busbw (GB/s) or time (us) of one collective.
--
-- Topology: the GPU's scale-up fabric (catalog gpu.scaleup.fabric, or the
-- case's hardware.intra_node) over hardware.gpus_per_node GPUs per node;
-- nodes = gpus / gpus_per_node over hardware.inter_node with
-- hardware.nics_per_node NICs (default one per GPU, the rail-optimised
-- DGX/HGX layout); each GPU reaches the NICs over its own PCIe link (the
-- catalog's gpu.pcie); hardware.cpu_vendor and hardware.host_mem_bw the
-- hosts where the source names them; hardware.gpus_per_thread the GPUs one
-- nccl-tests thread drove (-g N), whose launches bound the time; hardware.gdr
-- false where the source places each rank's GPU off its NIC's PCIe switch (no
-- GPUDirect RDMA: the network data staged through host memory).  The
-- algorithm is the one NCCL's tuner picks
-- (NCCL's default) unless the case states the one its run forced (case.algo, NCCL_ALGO): the tuner of
-- the case's NCCL release, source.version, or where the source names none but gives its date
-- (source.date), the newest release tagged by then (comm.nccl_at), said in the defaults as assumed;
-- neither: the latest modelled.  case.nvls the run's NCCL_NVLS_ENABLE where its source sets
-- it ("off": NVLS and NVLS_TREE not run).
local comm = require "gpuplan.comm"

return function(case, cat)
  local h = case.hardware or {}
  local metric = case.measured and case.measured.metric
  if metric ~= "busbw_gbps" and metric ~= "time_us" then
    return nil, "collective metric must be busbw_gbps or time_us (got " .. tostring(metric) .. ")"
  end
  local case_ = require "gpuplan.predict.case"
  if case_.v(h.gpu) == nil then return nil, "hardware.gpu not given" end
  local gpu, gwhy = case_.gpu(case, cat)
  if not gpu then return nil, gwhy end
  local defaults = {}
  local intra = h.intra_node or (gpu.scaleup and gpu.scaleup.fabric)
  if not intra then return nil, "gpu " .. h.gpu .. " has no scale-up fabric in the catalog" end
  if not cat.fabrics[intra] then return nil, "unknown fabric '" .. intra .. "'" end
  local gpus = h.gpus
  if type(gpus) ~= "number" or gpus < 1 then return nil, "hardware.gpus missing" end
  -- One rank: NCCL runs the collective as a local copy (src/enqueue.cc
  -- ncclLaunchOneRank), nothing crosses a link and nccl-tests prints a
  -- bus bandwidth of 0 (its factor (n - 1) / n): a measured busbw there is
  -- not a collective's, and a prediction of 0 against it scored -100%.
  if gpus == 1 and metric == "busbw_gbps" then
    return nil, "one GPU: nothing crosses a link (NCCL copies locally; nccl-tests' busbw is 0)"
  end
  local ppn = h.gpus_per_node
  if not ppn then
    ppn = math.min(gpus, gpu.scaleup and gpu.scaleup.domain or gpus)
    defaults[#defaults + 1] = "gpus_per_node=" .. ppn
  end
  local nodes = 1
  if gpus > ppn then nodes = gpus // ppn end
  local nics = h.nics_per_node
  if nodes > 1 then
    if not h.inter_node then return nil, "multi-node case without hardware.inter_node" end
    if not cat.fabrics[h.inter_node] then return nil, "unknown fabric '" .. h.inter_node .. "'" end
    if not nics then
      nics = ppn
      defaults[#defaults + 1] = "nics_per_node=" .. nics .. " (one per GPU)"
    end
  end
  local topo = comm.from_fabrics({ scaleup = intra, gpus_per_node = ppn, nodes = nodes,
                                   nics = nics, nic_fabric = h.inter_node, gpu = gpu,
                                   cpu_vendor = h.cpu_vendor }, cat)
  -- The host's DRAM where the case gives it: traffic staged through host
  -- memory shares it (engine/comm.c), at what streaming reaches (0.8, as
  -- comm.topology reads a catalog system's).
  if h.host_mem_bw then topo.host_mem_bw = h.host_mem_bw * 0.8 end
  -- No GPUDirect RDMA where the case says so (hardware.gdr = false: each
  -- rank's GPU is off its NIC's PCIe switch): NCCL stages the network data
  -- through host memory (engine/comm.c nic_path).
  if h.gdr == false then
    if nodes < 2 then return nil, "hardware.gdr applies to a case across nodes" end
    topo.nic_gdr_off = true
  end

  -- NCCL_ALGO where the run forced it (case.algo, gp.comm's names), read
  -- from that field alone: the notes quote the source.
  local algo = case.algo
  if algo then defaults[#defaults + 1] = "algo=" .. algo .. " (the case's NCCL_ALGO)" end

  -- One nccl-tests thread driving several GPUs (-g N) launches their
  -- kernels one after another (comm.launch_floor).
  local gpt = h.gpus_per_thread
  if gpt and gpt > math.min(gpus, ppn) then
    return nil, string.format("hardware.gpus_per_thread %d exceeds the %d GPUs of a node "
      .. "(hardware.gpus, hardware.gpus_per_node): one nccl-tests thread drives GPUs of its "
      .. "own node", gpt, math.min(gpus, ppn))
  end
  if gpt and gpt > 1 then defaults[#defaults + 1] = string.format("gpus_per_thread=%d (the case's -g)", gpt) end
  local src = case.source or {}
  local nccl = src.version
  if not nccl and src.date then
    nccl = comm.nccl_at(src.date)
    if not nccl then
      local first = comm.NCCL_RELEASES[1]
      return nil, string.format("source.date %s precedes the oldest NCCL release modelled "
        .. "(%s, tagged %s): give source.version", src.date, first[1], first[2])
    end
    defaults[#defaults + 1] = "nccl=" .. nccl .. " (assumed: the newest NCCL release at the "
      .. "source's date " .. src.date .. ")"
  end
  if nccl and not comm.nccl_code(nccl) then
    return nil, "source.version " .. nccl .. " is not an NCCL 2.x release"
  end
  -- NCCL_NVLS_ENABLE where the run's environment sets it (case.nvls):
  -- "off" takes NVLS and NVLS_TREE from the tuner's choice (gp.comm's nvls).
  local nvls = case.nvls
  if nvls ~= nil and nvls ~= "auto" then
    defaults[#defaults + 1] = "nvls=" .. nvls .. " (the case's NCCL_NVLS_ENABLE)"
  end
  local job = { op = case.collective, bytes = case.bytes, gpus = gpus,
                topology = topo, algo = algo, gpus_per_thread = gpt, nccl = nccl,
                nvls = nvls }
  local r = comm.comm(job)
  local value = metric == "busbw_gbps" and r.busbw / 1e9 or r.time * 1e6
  return { value = value, defaults = defaults,
           job = job, call = "comm",
           shows = metric == "busbw_gbps" and "r.busbw / 1e9" or "r.time * 1e6",
           regime = require("gpuplan.ranges").regime("collective",
             { op = case.collective, gpu = gpu, gpus = gpus, gpus_per_node = ppn }, nil, cat),
           detail = string.format("%s/%s, %.1f us", r.algo, r.proto, r.time * 1e6) }
end
