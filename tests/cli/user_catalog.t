# A user's catalog directory extends and overrides the built-in one without
# recompiling, and the answers change accordingly.
use strict;
use warnings;
use Test::More;
use File::Temp qw(tempdir);
use File::Path qw(make_path);
require './tests/cli/lib.pl';

my $xdg = tempdir(CLEANUP => 1);
my $dir = "$xdg/gpuplan/catalog";
make_path($dir);

# A new GPU, reusing a built-in arch and fabric.
write_file("$dir/mygpu.lua", <<'LUA');
gpu {
  id = "my-h100-64g", name = "Hypothetical H100 with 64 GiB", vendor = "NVIDIA",
  arch = "hopper", memory = "64GiB", mem_bw = "3.35TB/s",
  peak = { bf16 = "989TFLOPS", fp8 = "1979TFLOPS" },
  scaleup = { fabric = "nvlink4", domain = 8 },
  source = "user test",
}
LUA
# The H100's cheapest sourced price, overridden by id.
write_file("$dir/price.lua", <<'LUA');
price {
  id = "h100-sxm/aiapiplaybook/global", gpu = "h100-sxm", provider = "my deal",
  provider_kind = "specialty", region = "global", price = "$0.50/h",
  date = "2026-11", source = "user test",
}
LUA

my $empty = tempdir(CLEANUP => 1);
local $ENV{XDG_CONFIG_HOME} = $empty;
local $ENV{GPUPLAN_CATALOG} = '';
my ($c, $o, $e) = run_gp();
# The guide's price column is the cheapest sourced h100-sxm entry:
# h100-sxm/aiapiplaybook/global, price = "$1.80/h" in
# catalog/prices/usd-2026.lua (the others: 2.10, 2.25, 2.69, 3.00, 3.24,
# 4.25; the seed guide's $3/h is not a sourced price).
like($o, qr/^h100-sxm\s.*\s1\.80\s+global$/m, 'built-in cheapest H100 price is $1.80/h');

{
    local $ENV{XDG_CONFIG_HOME} = $xdg;
    ($c, $o, $e) = run_gp('catalog', 'check', $dir);
    is($c, 0, 'user catalog checks') or diag $e;

    # 7B LoRA (about 24 GiB in the guide) fits the new 64 GiB card.
    ($c, $o, $e) = run_gp('fit', 'llama2-7b', '--gpu', 'my-h100-64g', '--method', 'lora');
    is($c, 0, 'fit on the user GPU exits 0') or diag $e;
    like($o, qr/^fits: yes/m, 'new GPU is usable by fit without recompiling');

    ($c, $o, $e) = run_gp();
    like($o, qr/^h100-sxm\s.*\s0\.50\s+global$/m, 'guide uses the overriding price');

    ($c, $o, $e) = run_gp('catalog', '--explain', 'h100-sxm/aiapiplaybook/global');
    like($o, qr/defined at \Q$dir\E\/price.lua:1\n  overrides catalog\/prices\//, '--explain shows the override');
}
# A buyer in China sets the market once, in the user catalog's settings:
# infer then prices h20 at AutoDL's 6.98 CNY/h (catalog/prices/cny.lua).
{
    my $cn = tempdir(CLEANUP => 1);
    make_path("$cn/gpuplan/catalog");
    write_file("$cn/gpuplan/catalog/settings.lua", qq(settings { currency = "CNY", market = "cn" }\n));
    local $ENV{XDG_CONFIG_HOME} = $cn;
    ($c, $o, $e) = run_gp('infer', 'llama3-8b', '--gpu', 'h20', '--batch', '8');
    is($c, 0, 'settings: infer runs') or diag $e;
    like($o, qr/^cost per 1M output tokens\s+[\d.]+ CNY \([\d.]+-[\d.]+\)$/m, 'settings: cost in CNY');
    like($o, qr/market=cn \(the catalog's settings\), price=6\.98 CNY\/GPU-h \(h20\/autodl\/cn, cn\)/,
         'settings: the China-market offer, and where the market came from');
}
# The settings' safety_margin is every command's default --margin, as
# --help says: llama2-7b on an H100 (usable 79.10 GiB) keeps 79.10 x
# (1 - 0.2) = 63.28 GiB at 0.2 (fit's budget row prints 2 decimals).
{
    my $m = tempdir(CLEANUP => 1);
    make_path("$m/gpuplan/catalog");
    write_file("$m/gpuplan/catalog/settings.lua", qq(settings { safety_margin = 0.2 }\n));
    local $ENV{XDG_CONFIG_HOME} = $m;
    ($c, $o, $e) = run_gp('fit', 'llama2-7b', '--gpu', 'h100-sxm');
    like($o, qr/^budget\s+63\.28\s+[\d.]+\s+capacity - 20% margin$/m,
         'settings: safety_margin 0.2 is the default margin');
    ($c, $o, $e) = run_gp('fit', '--help');
    like($o, qr/--margin F .*\(default\s+the\s+catalog\s+settings'\s+safety_margin/s,
         '--help names the settings\' safety_margin as the default');
}
# A user's fabric with a bad nccl.max_recvs (catalog/FORMAT.md: the
# receives the network plugin takes in one call, an integer 1..64) is
# refused naming the user's file, the field's line and the field, with a
# non-zero exit, whatever command loads the catalog.
for my $bad (['0', qr/must be >= 1, got 0/], ['1.5', qr/expected an integer, got 1\.5/],
             ['"x"', qr/expected a finite number, got "x"/], ['65', qr/must be <= 64, got 65/]) {
    my ($v, $why) = @$bad;
    my $u = tempdir(CLEANUP => 1);
    make_path("$u/gpuplan/catalog");
    write_file("$u/gpuplan/catalog/net.lua", <<"LUA");
-- a user's network
fabric {
  id = "my-efa", name = "my EFA", scope = "scaleout", kind = "network",
  bw = "100Gb/s per-dir", latency = "20us", achievable = 0.90,
  achievable_reason = "user test",
  nccl = { max_recvs = $v, source = "user test" },
  source = "user test",
}
LUA
    local $ENV{XDG_CONFIG_HOME} = $u;
    ($c, $o, $e) = run_gp('fit', 'llama2-7b', '--gpu', 'h100-sxm');
    isnt($c, 0, "nccl.max_recvs = $v: refused");
    # line 6: the nccl line of the entry that opens on line 2
    like($e, qr/\Q$u\E\/gpuplan\/catalog\/net\.lua:6: fabric 'my-efa': field 'nccl\.max_recvs': $why/,
         "nccl.max_recvs = $v: the user's file, the field's line and the field");
}
done_testing();
