# What a second hardening walk (the machine-readable outputs a script or
# notebook consumes: --format json/csv and the Lua API) found: a value a
# script could not use as it is.  One block a fix.
use strict;
use warnings;
use Test::More;
require './tests/cli/lib.pl';
use JSON::PP ();
use File::Temp ();

my ($c, $o, $e);

# 1. guide --format json gave each card's price as a string ("0.95", the
# text's cell, with the guide mark "*" glued on), and no section said what
# unit a key is in (hbm, link, price: the text's column headers say it,
# the JSON dropped them).  Now a price is a number, the mark is
# price_guide, and each section carries its columns' labels.
{
    ($c, $o, $e) = run_gp('guide', '--format', 'json');
    is($c, 0, 'guide --format json: exit 0') or diag $e;
    my $d = eval { JSON::PP::decode_json($o) };
    ok($d, 'guide --format json parses') or diag $@;
    my $cards = $d->[0];
    my ($h100) = grep { $_->{gpu} eq 'h100-sxm' } @{$cards->{rows}};
    ok($h100, 'the cards section has h100-sxm');
    # a JSON number decodes to a scalar without the string flag: its
    # JSON::PP re-encoding has no quotes
    like(JSON::PP->new->canonical->encode([$h100->{price}]), qr/^\[[0-9.]+\]$/,
         'guide json: price is a number, not a string');
    my %label = map { $_->{key} => $_->{label} } @{$cards->{columns} || []};
    is($label{price}, 'USD/GPU-h', 'guide json: the price column states its unit');
    # "memory TB/s": HBM or GDDR (the RTX 4090 row is GDDR6X)
    is($label{hbm}, 'memory TB/s', 'guide json: the hbm column states its unit');
    # the text still shows the same two decimals
    ($c, $o, $e) = run_gp('guide');
    like($o, qr/^h100-sxm\s.*\s\d+\.\d\d\s+\S/m, 'guide text: price with two decimals');
}

# 2. rl --format json, a rollout with no room to run (llama3-8b on 8 x
# H100 at --zero 0: 142 GiB a GPU held before the KV cache): the text shows
# its seconds as "-" and step_s is absent, but phases[].seconds of the
# rollout read 0 -- a script summing the phases got a step without its
# rollout.  Now the rollout phase has no seconds either.
{
    ($c, $o, $e) = run_gp(qw(rl llama3-8b --gpu h100-sxm --gpus 8 --zero 0 --format json));
    is($c, 0, 'rl --format json: exit 0') or diag $e;
    my $d = eval { JSON::PP::decode_json($o) };
    ok($d && !$d->{rollout_fits}, 'the rollout does not fit') or diag $o;
    ok(!exists $d->{step_s}, 'no step_s');
    my ($ro) = grep { $_->{name} eq 'rollout' } @{$d->{phases}};
    ok($ro && !exists $ro->{seconds}, 'rl json: a rollout that does not fit has no seconds (not 0)')
        or diag JSON::PP->new->canonical->encode($ro);
    my ($lp) = grep { $_->{name} eq 'logprob' } @{$d->{phases}};
    ok($lp && $lp->{seconds} > 0, 'the other phases keep their seconds');
}

# 3. gp.comm{system = ID} returned no gpu, though docs/lua.md lists gpu
# ("the card's id") in its result and the system names one card
# (dgx-h100: h100-sxm); only gpu = ID set it.
{
    my $dir = File::Temp::tempdir(CLEANUP => 1);
    my $f = "$dir/comm.lua";
    open(my $fh, '>', $f) or die; print $fh <<'LUA'; close $fh;
local gp = require "gpuplan"
print(tostring(gp.comm{ op = "all_reduce", bytes = 2^30, gpus = 8, system = "dgx-h100" }.gpu))
print(tostring(gp.comm{ op = "all_reduce", bytes = 2^30, gpus = 8, gpu = "h100-sxm" }.gpu))
LUA
    ($c, $o, $e) = run_gp('run', $f);
    is($c, 0, 'gp.comm script: exit 0') or diag $e;
    is($o, "h100-sxm\nh100-sxm\n", 'gp.comm: gpu is the card id under system = ID as under gpu = ID');
}

# 4. roofline --format json/csv keyed the ridge table's TFLOP/s as bare
# "peak" and "achievable" (494.5 for the H100's tf32), where gp.roofline's
# device.peak is FLOP/s (4.945e14): a script mixing the two was 1e12 off.
# The keys name the unit now, as the operators' table's tflops does.
{
    ($c, $o, $e) = run_gp(qw(roofline --gpu h100-sxm --format json));
    is($c, 0, 'roofline --format json: exit 0') or diag $e;
    my $d = eval { JSON::PP::decode_json($o) } || [];
    my ($bf) = grep { $_->{precision} eq 'bf16' } @$d;
    # H100 SXM dense bf16 989 TFLOP/s (the catalog's peak.bf16 = 989e12)
    is($bf && $bf->{peak_tflops}, 989, 'roofline json: peak_tflops, in TFLOP/s');
    ok($bf && !exists $bf->{peak}, 'roofline json: no unitless peak');
    ($c, $o, $e) = run_gp(qw(roofline --gpu h100-sxm --format csv));
    like($o, qr/\Aprecision,peak_tflops,achievable_tflops,ridge_peak,ridge\n/,
         'roofline csv: the header names the unit');
}

# 5. guide --format json's "which card for which job" rows carried time
# and cost only as the text's cells ("4.1 h (3.8-4.6)", "117 USD
# (108-132)"): a script had to parse the value and its 80% range out of
# prose.  Now each row has them as numbers: days, days_lo, days_hi (a job
# that runs to an end), cost_amount, cost_lo, cost_hi and cost_unit.
{
    ($c, $o, $e) = run_gp('guide', '--format', 'json');
    my $d = eval { JSON::PP::decode_json($o) } || [];
    my ($jobs) = grep { ($_->{title} // '') =~ /^Which card/ } @$d;
    ok($jobs, 'guide json: the jobs section') or diag $o;
    my ($a) = grep { $_->{scenario} =~ /^A 7B multimodal SFT/ } @{$jobs->{rows} || []};
    ok($a && defined $a->{cost_amount} && defined $a->{days}, 'scenario A: cost_amount and days')
        or diag JSON::PP->new->canonical->encode($a);
    # the range brackets the value (lo <= value <= hi)
    ok($a && $a->{cost_lo} <= $a->{cost_amount} && $a->{cost_amount} <= $a->{cost_hi},
       'scenario A: cost_lo <= cost_amount <= cost_hi');
    ok($a && $a->{days_lo} <= $a->{days} && $a->{days} <= $a->{days_hi},
       'scenario A: days_lo <= days <= days_hi');
    is($a && $a->{cost_unit}, 'USD', 'scenario A: the cost in USD');
    # the text's cell is the same figure: "117 USD (108-132)" is cost_amount
    # to the unit (money(): %.0f below 1k)
    my ($txt) = ($a->{cost} // '') =~ /^([\d.]+) USD/;
    ok(defined $txt && abs($txt - $a->{cost_amount}) <= 0.5, 'the cell and the number agree');
    my ($f) = grep { $_->{scenario} =~ /^F DeepSeek/ } @{$jobs->{rows} || []};
    is($f && $f->{cost_unit}, 'USD/1M output tokens', 'serving: cost per 1M output tokens');
    ok($f && !exists $f->{days}, 'serving: no days');
}

# 6. fit --format json of a training job wrote max_seqs 0 and max_ctx 0
# (docs/lua.md: "longest context that fits (inference)"): a script read
# "no context fits" for a job that has no KV cache.  As host_* are left
# out for inference, these are left out for training.
{
    ($c, $o, $e) = run_gp(qw(fit llama3-8b --gpu h100-sxm --method lora --format json));
    is($c, 0, 'fit lora --format json: exit 0') or diag $e;
    my $d = eval { JSON::PP::decode_json($o) } || {};
    ok(!exists $d->{max_ctx} && !exists $d->{max_seqs}, 'fit json, training: no max_ctx, max_seqs')
        or diag "max_ctx=" . ($d->{max_ctx} // 'absent');
    ($c, $o, $e) = run_gp(qw(fit llama3-8b --gpu h100-sxm --method infer --format json));
    $d = eval { JSON::PP::decode_json($o) } || {};
    # llama3-8b bf16 on an 80 GB H100: 16 GB of weights leave tens of GB
    # for KV, far more than one sequence of its 8k context (1 GiB at bf16)
    ok(($d->{max_seqs} // 0) > 1 && ($d->{max_ctx} // 0) > 8192, 'fit json, inference: both, positive')
        or diag $o;
}

done_testing();
