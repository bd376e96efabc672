# What a tenth new-user walk (an inference platform lead: dense and MoE
# serving with vLLM, SGLang, TensorRT-LLM, llama.cpp and ExLlamaV2 on
# H100/H200/B200/H20/L40S/RTX 4090, LoRA/QLoRA and GRPO on the 8B,
# collectives on NVL72, HGX and PCIe, prices) found on the command line:
# an answer that was wrong, silent or unreadable.  One block a fix.
use strict;
use warnings;
use Test::More;
require './tests/cli/lib.pl';

my ($c, $o, $e);

# 1. --price with an offer id the catalog does not hold (a provider it
# does not list) read "bad price 'h100-sxm/lambda/us': expected an amount
# per GPU-hour like '$2.49/h'", exit 2, as if no price id were taken
# (the help: "2.49, '$2.49/h' or a catalog price id").  It is an unknown
# catalog id: exit 1, naming --price and the card's offers.
for my $cmd (qw(train infer plan rl)) {
    ($c, $o, $e) = run_gp($cmd, 'llama3-8b', '--gpu', 'h100-sxm', '--price', 'h100-sxm/lambda/us');
    is($c, 1, "$cmd --price h100-sxm/lambda/us: exit 1 (an unknown id)");
    like($e, qr/^gpuplan: $cmd: --price 'h100-sxm\/lambda\/us' is no catalog offer \(the offers for h100-sxm: .*h100-sxm\/runpod-secure\/global/,
         "$cmd: names --price and the card's offers");
    is($o, '', "$cmd: nothing on stdout");
}
# text that is no id stays a value --price cannot parse
($c, $o, $e) = run_gp('train', 'llama3-8b', '--gpu', 'h100-sxm', '--price', 'abc/h');
is($c, 2, '--price abc/h: still a usage error');
like($e, qr/bad price 'abc\/h': expected an amount/, '--price abc/h: the amount parser says what it wanted');

done_testing();
