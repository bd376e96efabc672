# gpuplan rl --vllm-version / --vllm-v0: the rollout engine's vLLM release
# and its V0 fall-back (lua/gpuplan/options.lua, one declaration for the
# flag, the Lua key, the help and the case fields rl.vllm_version /
# rl.vllm_v0).  V0 processes each step's outputs between two decode steps
# where it has no async output processor (before 0.6.0, vllm PR #7049; or
# under enforce_eager, which turns it off): gpuplan.rl.ENGINE_V0_OUTPUT,
# (3.4 - 0.2) / 31 = 0.1032258 ms a sequence a decode step (vLLM RFC
# #6913), added to the rollout's per-sequence host work.
use strict;
use warnings;
use Test::More;
use JSON::PP;
require './tests/cli/lib.pl';

my $V0 = (3.4e-3 - 0.2e-3) / 31;
# Fixed 256-token responses, 64 prompts x 8 samples on 8 GPUs: 8 engines
# of 64 sequences each, every decode step at batch 64.
my @job = ('qwen2.5-7b', '--gpu', 'h100-sxm', '--gpus', '8', '--prompts', '64', '--group', '8',
           '--response-len', '256', '--response-max', '256', '--response-dist', 'fixed');

sub rl_json {
    my ($c, $o, $e) = run_gp('rl', @job, @_, '--format', 'json');
    is($c, 0, "rl @_ exits 0") or diag $e;
    my $d = decode_json($o);
    my ($roll) = grep { $_->{name} eq 'rollout' } @{ $d->{phases} };
    return ($d, $roll->{seconds});
}

my ($v1, $r1) = rl_json();
my ($old, $r0) = rl_json('--vllm-version', '0.4.2');
is($old->{rollout}{steps}, 256, '256-token responses: 256 decode steps');
# The engine charges its per-sequence host work once a decode step for each
# running sequence and once for each request the prefill schedules
# (engine/rollout.c): (256 + 1) x 64 x 0.1032258e-3 = 1.69786 s more
# rollout, serial with the GPU (no async scheduling; dgx-h100's
# host_op_scale 1).  1e-9 relative: the same terms summed in another order.
my $want = ($old->{rollout}{steps} + 1) * 64 * $V0;
ok(abs(($r0 - $r1) / $want - 1) < 1e-9,
   '--vllm-version 0.4.2: (steps + 1) x 64 x 0.103 ms more rollout')
    or diag "got " . ($r0 - $r1) . ", want $want";
my ($given) = rl_json('--frontend-host', sprintf('%.17g', $V0));
is($given->{step_s}, $old->{step_s}, 'the same step as --frontend-host 1.032e-4 given');

# The defaults line names the release and why (the CLI's flag names).
my ($c, $o, $e) = run_gp('rl', @job, '--vllm-version', '0.4.2');
like($o, qr/frontend_host=0\.0001032 \(--vllm-version 0\.4\.2: vLLM's V0 engine before 0\.6\.0 has no async output processor \(vllm PR #7049\), so LLMEngine\._process_model_outputs runs between two decode steps, 0\.103 ms a sequence a step \(vLLM RFC #6913\)\)/,
     'defaults: frontend_host from --vllm-version, with its source');
($c, $o, $e) = run_gp('rl', @job);
unlike($o, qr/frontend_host=/, 'no release given: no V0 figure assumed');

# V1's fall-back to V0 under enforce_eager: the same figure on the eager
# engine, as 0.6.3 with --rollout-eager.
my ($eager, $re) = rl_json('--rollout-eager');
my ($fb, $rfb) = rl_json('--rollout-eager', '--vllm-v0');
my ($e063, $r063) = rl_json('--rollout-eager', '--vllm-version', '0.6.3');
ok(abs(($rfb - $re) / ((256 + 1) * 64 * $V0) - 1) < 1e-9, '--vllm-v0 --rollout-eager: V0 output processing');
is($e063->{step_s}, $fb->{step_s}, '--vllm-version 0.6.3 --rollout-eager: the same step');
my ($new) = rl_json('--vllm-version', '0.8.5');
is($new->{step_s}, $v1->{step_s}, '--vllm-version 0.8.5 (V1): the default step');

# Refusals: usage errors (exit 2) naming the flag.
for my $t (
    [['--vllm-version', 'v0.4.2'], qr/^gpuplan: rl: --vllm-version v0\.4\.2: not a vLLM release written plain, X\.Y or X\.Y\.Z as 0\.4\.2 \(no tag's v, rc or suffix\)$/m],
    [['--vllm-version', '0.4.x'], qr/^gpuplan: rl: --vllm-version 0\.4\.x: not a vLLM release written plain/m],
    [['--vllm-version', '0.6.3'], qr/^gpuplan: rl: --vllm-version 0\.6\.3 runs vLLM's V0 engine, whose async output processor \(vLLM 0\.6\.0 on\) overlaps .* give --rollout-eager \(enforce_eager turns that processor off\), or a --vllm-version before 0\.6\.0$/m],
    [['--vllm-v0'], qr/^gpuplan: rl: --vllm-v0 runs vLLM's V0 engine, .* give --rollout-eager \(enforce_eager turns that processor off\)$/m],
    [['--vllm-v0', '--rollout-eager', '--vllm-version', '0.7.3'], qr/^gpuplan: rl: --vllm-v0 says a V1 release \(0\.8\.0 on\) runs V0; --vllm-version 0\.7\.3 is a V0 release: leave --vllm-v0 out$/m],
    [['--vllm-version', '0.4.2', '--rollout-engine', 'hybrid'], qr/^gpuplan: rl: --vllm-version is vLLM's; the hybrid engine generates with Hugging Face's generate$/m],
) {
    my ($a, $re) = @$t;
    my ($c, $o, $e) = run_gp('rl', @job, @$a);
    is($c, 2, "rl @$a: a usage error, exit 2");
    like($e, $re, "rl @$a: names the flag");
}

# --help lists both in the RL group.
($c, $o, $e) = run_gp('rl', '--help');
like($o, qr/^  --vllm-version X\.Y\[\.Z\]\s+the rollout engine's vLLM release/m, '--help: --vllm-version');
like($o, qr/^  --vllm-v0\s+the rollout runs vLLM's V0 engine/m, '--help: --vllm-v0');

done_testing();
