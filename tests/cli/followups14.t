# Small items last round's reviewers found (followups14): one block a fix.
use strict;
use warnings;
use Test::More;
use File::Temp qw(tempdir);
use JSON::PP;
require './tests/cli/lib.pl';

my ($c, $o, $e);
my $dir = tempdir(CLEANUP => 1);

# 2. plan --format json wrote job.tokens as the text typed ("2B"), and the
# fingerprint gpuplan merge compares shards by hashed that text, so shards
# of one search typed as --tokens 2B and --tokens 2e9 were refused as two
# jobs.  Both are 2 x 10^9 tokens: job.tokens is that count, and the
# fingerprints agree.
my %fp;
for my $t ('2B', '2e9') {
    ($c, $o, $e) = run_gp('plan', 'llama3-8b', '--gpu', 'h100-sxm', '--gpus', '8',
                          '--tokens', $t, '--shard', ($t eq '2B' ? '1/2' : '2/2'),
                          '--format', 'json');
    is($c, 0, "plan --tokens $t --format json: exit 0") or diag $e;
    write_file("$dir/$t.jsonl", $o);
    my ($head) = split /\n/, $o;
    my $j = eval { decode_json($head) } || {};
    is($j->{job}{tokens}, 2e9, "--tokens $t: job.tokens is the count 2e9, a number")
        or diag $head;
    ok(!ref($j->{job}{tokens}) && $head =~ /"tokens":2000000000\b/,
       "--tokens $t: written as a JSON number") or diag $head;
    $fp{$t} = $j->{fingerprint};
}
ok(defined $fp{'2B'} && $fp{'2B'} eq $fp{'2e9'}, "2B and 2e9: one fingerprint ($fp{'2B'})");
($c, $o, $e) = run_gp('merge', "$dir/2B.jsonl", "$dir/2e9.jsonl");
is($c, 0, 'merge takes a 2B shard and a 2e9 shard as one search') or diag $e;

# 3. --fsdp-version on a step without FSDP (stack hf at the default zero
# 0: DDP) was taken and changed nothing (the engine prices it only where a
# step shards); now a usage error naming the flag and what turns FSDP on.
# With --fsdp (or --zero 3) it is taken, and on another stack it is a
# usage error too (it was exit 1).
($c, $o, $e) = run_gp('train', 'llama3-8b', '--gpu', 'h100-sxm', '--gpus', '8', '--stack', 'hf',
                      '--fsdp-version', '2');
is($c, 2, '--fsdp-version 2 without FSDP: exit 2') or diag $e;
like($e, qr/--fsdp-version chooses PyTorch FSDP's implementation, and this step has no FSDP \(--zero 0 on stack hf\): turn it on with --fsdp full_shard or shard_grad_op \(or --zero 3 or 2\)/,
     'the refusal names --fsdp-version and --fsdp / --zero') or diag $e;
($c, $o, $e) = run_gp('train', 'llama3-8b', '--gpu', 'h100-sxm', '--gpus', '8', '--stack', 'hf',
                      '--fsdp', 'full_shard', '--fsdp-version', '2');
is($c, 0, '--fsdp full_shard --fsdp-version 2: exit 0') or diag $e;
($c, $o, $e) = run_gp('train', 'llama3-8b', '--gpu', 'h100-sxm', '--gpus', '8',
                      '--stack', 'megatron', '--fsdp-version', '2');
is($c, 2, '--fsdp-version on stack megatron: exit 2') or diag $e;
like($e, qr/--fsdp-version is PyTorch FSDP's/, 'and names --fsdp-version') or diag $e;

done_testing();
