# --output-dist (gp.infer's output_dist): a burst's outputs spread around
# --output, priced as continuous batching drains them; bad values are
# usage errors naming the flag.
use strict;
use warnings;
use Test::More;
require './tests/cli/lib.pl';

my ($c, $o, $e);
my @job = qw(infer llama3.1-8b --gpu h100-sxm --runtime vllm --input 216 --output 197);

# A burst of 1000: without the flag the assumptions say every request is
# at the mean; with sharegpt they name the limit, 2048 - 216 = 1832, and
# the system's tokens/s falls (the longest outputs decode alone at the end).
($c, $o, $e) = run_gp(@job, qw(--requests 1000));
is($c, 0, 'a burst at the mean runs') or diag $e;
like($o, qr/output_dist=mean: every request of the burst at --output 197 tokens/,
     '... and says its outputs are all at the mean');
my ($mean) = $o =~ /^tokens\/s system\s+(\d+)/m;
($c, $o, $e) = run_gp(@job, qw(--requests 1000 --output-dist sharegpt));
is($c, 0, '--output-dist sharegpt runs') or diag $e;
like($o, qr/output_dist=sharegpt: outputs exponential around 197 tokens, none past 1832/,
     '... and says its limit');
my ($spread) = $o =~ /^tokens\/s system\s+(\d+)/m;
ok(defined $mean && defined $spread && $spread < 0.8 * $mean,
   "spread outputs: tokens/s well under the mean lengths' ($spread against $mean)");

# Bad input: usage errors (exit 2) naming the flag.
($c, $o, $e) = run_gp(@job, qw(--requests 1000 --output-dist zipf));
is($c, 2, 'an unknown distribution is a usage error');
like($e, qr/output.dist/, '... naming the option') or diag $e;
($c, $o, $e) = run_gp(@job, qw(--output-dist sharegpt));
is($c, 2, 'sharegpt without --requests is a usage error');
like($e, qr/give (?:--)?requests/, '... asking for the burst') or diag $e;

done_testing();
