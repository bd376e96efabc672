# What a fourteenth new-user walk (odd inputs on the options of session
# 62: --optimizer muon, hybrid_pattern / mamba, --paged-decode,
# --checkpoint-offload, attn_head_copies, the einsum dispatcher) found: an
# input taken without a word where it changes nothing or is read as
# something else.  One block a fix, the command line and the Lua key both.
use strict;
use warnings;
use Test::More;
require './tests/cli/lib.pl';
use File::Temp ();

my ($c, $o, $e);
my $tmp = File::Temp::tempdir(CLEANUP => 1);

# 1. --attn-kernel beside --no-flash: the unfused attention prices its
# scores as GEMMs and a softmax, so the named fused kernel changed
# nothing (train llama3-8b on 8 h100-sxm: step 5.6424 s with or without
# --attn-kernel fa3).  Conflicting flags: a usage error naming both, on
# every command that takes the kernel, and the Lua keys alike.
{
    for my $cmd ('train', 'plan', 'rl') {
        ($c, $o, $e) = run_gp($cmd, 'llama3-8b', '--gpu', 'h100-sxm', '--gpus', '8', '--no-flash',
                              '--attn-kernel', 'fa3');
        is($c, 2, "$cmd --no-flash --attn-kernel fa3: a usage error");
        like($e, qr/^gpuplan: $cmd: --attn-kernel fa3 is a fused attention kernel; the run's attention is unfused \(--no-flash\): give one or the other\n/,
             "$cmd: names both flags");
        is($o, '', "$cmd: prints no table");
    }
    ($c, $o, $e) = run_gp('train', 'llama3-8b', '--gpu', 'h100-sxm', '--gpus', '8', '--attn-kernel', 'fa3');
    is($c, 0, 'train --attn-kernel fa3 with the fused attention stands') or diag $e;
    write_file("$tmp/ak.lua", <<'LUA');
local gp = require "gpuplan"
local ok, err = pcall(gp.train, { model = "llama3-8b", gpu = "h100-sxm", gpus = 8,
  flash = false, attn_kernel = "fa2" })
print(ok, err)
LUA
    ($c, $o, $e) = run_gp('run', "$tmp/ak.lua");
    like($o, qr/^false\t\S+ak\.lua:2: train: attn_kernel fa2 is a fused attention kernel; the run's attention is unfused \(flash = false\)/,
         'gp.train: the Lua keys named, at the script\'s line') or diag "$o$e";
}

done_testing();
