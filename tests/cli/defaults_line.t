# The "defaults:" / "assumed" line of the command line names each option
# as the user can type it there (one declaration in options.lua gives the
# flag): an entry "name=value" is an option whose --name the command's
# --help lists; a flag is written as typed (--flash, --no-async-scheduling);
# a key that only the Lua function takes (infer's kv_policy, fit's
# max_num_tokens) is said in words.  Before: flash=true (help: --no-flash),
# kv_policy=mean and attn_kernel=fa3 on infer, and fit --method grpo's
# attn_kernel, max_batch, max_num_tokens, split_proj and system.
use strict;
use warnings;
use Test::More;
use File::Temp qw(tempdir);
require './tests/cli/lib.pl';

sub entries_typeable {
    my ($name, $cmd, $line, @args) = @_;
    my ($hc, $help) = run_gp($cmd, '--help');
    my @bad;
    # an entry opens the line or follows ", " (plan: after "card: ")
    while ($line =~ /(?:^|, )(?:[\w.-]+: )?([a-z][a-z0-9_]*)=/g) {
        # the name is kept before s///r and the match below reset $1
        # (a flag of both forms is listed --[no-]NAME)
        my $key = $1;
        my $flag = $key =~ s/_/-/gr;
        push @bad, $key unless $help =~ /--(?:\[no-\])?\Q$flag\E\b/;
    }
    while ($line =~ /(?:^|, )(--[a-z][a-z0-9-]*)/g) {
        # the parser takes --NAME and --no-NAME of every flag; help shows one
        my $f = $1; (my $base = $f) =~ s/^--(?:no-)?//;
        push @bad, $f unless $help =~ /--(?:no-|\[no-\])?\Q$base\E\b/;
    }
    is("@bad", '', "$name: every option on the line is one gpuplan $cmd takes");
}

my @cases = (
    [ 'train', [ 'llama3-8b', '--gpu', 'h100-sxm', '--gpus', '8' ], qr/^defaults: (.*)$/m ],
    [ 'plan',  [ 'llama3-8b', '--gpu', 'h100-sxm', '--gpus', '8' ], qr/^defaults: (.*)$/m ],
    [ 'rl',    [ 'llama3-8b', '--gpu', 'h100-sxm', '--gpus', '8' ], qr/^defaults: (.*)$/m ],
    [ 'fit',   [ 'llama3-8b', '--gpu', 'h100-sxm', '--gpus', '8', '--method', 'grpo' ], qr/^defaults: (.*)$/m ],
    [ 'fit',   [ 'llama3-8b', '--gpu', 'h100-sxm', '--method', 'infer' ], qr/^defaults: (.*)$/m ],
    [ 'infer', [ 'llama3-8b', '--gpu', 'h100-sxm', '--offload', '--offload-layers', '4' ], qr/^assumed +(.*)$/m ],
    [ 'infer', [ 'mixtral-8x7b', '--gpu', 'h100-sxm', '--gpus', '8', '--ep', '8' ], qr/^assumed +(.*)$/m ],
);
for my $k (@cases) {
    my ($cmd, $args, $re) = @$k;
    my ($c, $o, $e) = run_gp($cmd, @$args);
    my $name = "$cmd @$args";
    my ($line) = $o =~ $re;
    ok(defined $line, "$name: has the line") or diag "$o$e";
    entries_typeable($name, $cmd, $line // '');
}

my ($c, $o, $e) = run_gp('train', 'llama3-8b', '--gpu', 'h100-sxm', '--gpus', '8');
like($o, qr/^defaults: .*, --flash, /m, 'train: flash written as typed, not flash=true');
($c, $o, $e) = run_gp('infer', 'llama3-8b', '--gpu', 'h100-sxm');
like($o, qr/^assumed .*\bkv policy: mean,/m, 'infer: gp.infer\'s kv_policy said in words');
unlike($o, qr/kv_policy/, 'infer: no kv_policy key');
($c, $o, $e) = run_gp('fit', 'llama3-8b', '--gpu', 'h100-sxm', '--gpus', '8', '--method', 'grpo');
like($o, qr/max batch: 1024, max num tokens: 16384/, 'fit --method grpo: the rollout engine\'s limits in words');
# (system is fit's since it takes --system: "system=dgx-h100" is typeable)
unlike($o, qr/\b(attn_kernel|max_batch|max_num_tokens|split_proj)=/, 'fit --method grpo: no key fit refuses');
like($o, qr/\bsystem=dgx-h100\b/, 'fit --method grpo: the node as fit\'s --system takes it');
# gp.* results keep the Lua key (the Lua surface).
my $dir = tempdir(CLEANUP => 1);
open(my $fh, '>', "$dir/d.lua") or die;
print $fh 'local gp = require "gpuplan"; print(table.concat(gp.infer{ model = "llama3-8b", gpu = "h100-sxm" }.defaults, ", "))', "\n";
close $fh;
($c, $o, $e) = run_gp('run', "$dir/d.lua");
like($o, qr/\bkv_policy=mean\b/, 'gp.infer: the Lua key kv_policy') or diag $e;
done_testing();
