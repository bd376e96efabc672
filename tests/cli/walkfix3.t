# What a walk as a new user found (a llama.cpp user on an RTX 4090, a
# plan beside train, a long-context fit, a two-node all-reduce): a GGUF
# file priced under CUDA graphs, a llama-server batch no default gives,
# MFU in two formats, a context refusal with no way out, a CSV header
# without its unit, a title that read as sixteen systems.  One block a fix.
use strict;
use warnings;
use Test::More;
require './tests/cli/lib.pl';

my ($c, $o, $e);

# 1. A GGUF type name is a llama.cpp file: the runtime defaults to
# llama.cpp, said on the defaults line; a runtime given stays the user's.
($c, $o, $e) = run_gp(qw(infer llama3-8b --gpu rtx-4090 --weights Q4_K_M));
is($c, 0, 'infer --weights Q4_K_M: priced') or diag $e;
like($o, qr/runtime=llama\.cpp \(a GGUF type: llama\.cpp's format\)/, 'runtime=llama.cpp, said why');
unlike($o, qr/runtime=graphs/, 'not runtime=graphs');
# llama.cpp's own defaults follow: its f16 cache and no margin
like($o, qr/kv=fp16 \(llama\.cpp's default cache type/, "llama.cpp's f16 KV cache");
like($o, qr/stack=kernels/, 'the ranges of the kernels stack (llama.cpp), not graphs');
($c, $o, $e) = run_gp(qw(infer llama3-8b --gpu rtx-4090 --weights Q4_K_M --runtime graphs));
is($c, 0, '--runtime graphs with a GGUF type: the user chose it') or diag $e;
unlike($o, qr/runtime=/, 'a runtime given is not a default');
($c, $o, $e) = run_gp(qw(infer llama3-8b --gpu rtx-4090 --weights int4));
like($o, qr/runtime=graphs/, 'a weight format that is no GGUF type: graphs as before');

# 2. llama-server serves -np slots: 4 where none is given
# (tools/server/server.cpp: "n_parallel is set to auto, using n_parallel
# = 4"), not the 69 sequences the KV holds; a batch or concurrency given
# is the user's -np.
($c, $o, $e) = run_gp(qw(infer llama3-8b --gpu rtx-4090 --weights Q4_K_M --runtime llama.cpp));
# batch = min(4 slots, 69 sequences the 19.84 GB KV budget holds at
# 0.302 GB each) = 4, exact (an integer)
like($o, qr/^batch per replica\s+4 \(x 1 replica\)$/m, 'batch 4: llama-server\'s slots');
like($o, qr/max_batch=4 \(llama-server's slots: -np auto = 4, tools\/server\/server\.cpp\)/,
     'the slots said with their source');
($c, $o, $e) = run_gp(qw(infer llama3-8b --gpu rtx-4090 --weights Q4_K_M --concurrency 16));
like($o, qr/^batch per replica\s+16 /m, '--concurrency 16: the user\'s -np');
unlike($o, qr/max_batch=/, 'no slot default beside a concurrency');

# 3. plan's MFU as train prints it: a percentage (the CSV keeps the
# fraction, its number)
my @plan = qw(plan llama3-8b --gpu h100-sxm --gpus 8 --method lora --tokens 300M);
($c, $o, $e) = run_gp(@plan);
is($c, 0, 'plan --method lora') or diag $e;
my ($pm) = $o =~ /^h100-sxm\s+8\s+TP1 DP8 ZeRO-1 mb4 none\s+\S+ \(\S+\)\s+(\S+)\s/m;
like($pm // '', qr/^\d+\.\d%$/, "plan's MFU a percentage ($pm)");
($c, $o, $e) = run_gp(qw(train llama3-8b --gpu h100-sxm --gpus 8 --method lora --zero 1 --batch 4 --tokens 300M));
my ($tm) = $o =~ /MFU (\d+\.\d%)/;
is($pm, $tm, 'the same figure train prints for the same layout');
($c, $o, $e) = run_gp(@plan, '--format', 'csv');
like($o, qr/^h100-sxm,8,TP1 DP8 ZeRO-1 mb4 none,[\d.]+,[\d.]+,[\d.]+,0\.\d{3},/m, 'CSV: the fraction');

# 4. A context past the model's: the catalog's models of its family and
# shape that hold it are named
($c, $o, $e) = run_gp(qw(fit llama3-70b --gpu h200-sxm --gpus 4 --method infer --seq 32768));
is($c, 1, 'fit --seq past the context: refused');
like($e, qr/exceed llama3-70b's context of 8192 tokens \(max_seq\); llama3\.1-70b, llama3\.3-70b of the same family and shape hold it \(context 131072 or more\)/,
     'llama3.1-70b named');
($c, $o, $e) = run_gp(qw(infer llama3-70b --gpu h200-sxm --gpus 4 --input 30000));
like($e, qr/context of 8192 tokens \(max_seq\); llama3\.1-70b/, 'infer: the same');
($c, $o, $e) = run_gp(qw(fit llama3-8b --gpu h200-sxm --method infer --seq 1000000));
like($e, qr/context of 8192 tokens \(max_seq\)$/m, 'none holds a million tokens: nothing named');

# 6. train's CSV: the hidden and range columns carry their unit as
# "seconds" does
($c, $o, $e) = run_gp(qw(train llama3-8b --gpu h100-sxm --gpus 8 --zero 3 --format csv));
like($o, qr/^part,seconds,share,hidden_seconds,seconds_lo,seconds_hi,/m, 'CSV header with units');

# 7. comm on a system: the GPUs named as cards, then the systems
($c, $o, $e) = run_gp(qw(comm --system dgx-h100 --nodes 2 --min 1GiB --max 1GiB));
like($o, qr/^all_reduce on 16 x h100-sxm on 2 x dgx-h100$/m, '16 H100s on 2 DGX H100s');
($c, $o, $e) = run_gp(qw(comm --system dgx-h100 --nodes 8 --gpus 8 --min 1GiB --max 1GiB));
like($o, qr/^all_reduce on 8 x h100-sxm on 8 x dgx-h100 \(1 GPU each\)$/m, 'one GPU of each: said');
($c, $o, $e) = run_gp(qw(comm --gpu h100-sxm --gpus 8 --min 1GiB --max 1GiB));
like($o, qr/^all_reduce on 8 x h100-sxm \(1 node x 8 GPUs\)$/m, 'a card-built node: as before');

done_testing();
