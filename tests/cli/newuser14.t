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

# 2. model import of a config with Mamba layers: NVIDIA's Nemotron-H
# config.json (hybrid_override_pattern "M*M-", mamba_num_heads ...) was
# imported as a 4-layer transformer, every M layer read as attention and
# an MLP, exit 0; Jamba's (attn_layer_period) and Mamba-2's (state_size)
# alike.  Refused, naming the file and the field (exit 1, as every
# config the importer cannot express); the Lua call refuses the same.
{
    my %cfg = (
        'nemotron_h' => ['hybrid_override_pattern', '{"model_type":"nemotron_h","hidden_size":2688,"num_hidden_layers":4,"num_attention_heads":32,"num_key_value_heads":2,"head_dim":128,"intermediate_size":1856,"vocab_size":131072,"hidden_act":"silu","hybrid_override_pattern":"M*M-","mamba_num_heads":64,"mamba_head_dim":64,"ssm_state_size":128,"n_groups":8,"max_position_embeddings":4096,"tie_word_embeddings":false}'],
        'jamba' => ['attn_layer_period', '{"model_type":"jamba","hidden_size":4096,"num_hidden_layers":32,"num_attention_heads":32,"num_key_value_heads":8,"intermediate_size":14336,"vocab_size":65536,"hidden_act":"silu","attn_layer_period":8,"attn_layer_offset":4,"num_experts":16,"num_experts_per_tok":2,"mamba_d_state":16}'],
        'mamba2' => ['state_size', '{"model_type":"mamba2","hidden_size":2560,"num_hidden_layers":64,"num_heads":80,"head_dim":64,"state_size":128,"n_groups":1,"vocab_size":50288,"hidden_act":"silu","intermediate_size":5120}'],
    );
    for my $t (sort keys %cfg) {
        my ($field, $json) = @{$cfg{$t}};
        write_file("$tmp/$t.json", $json);
        ($c, $o, $e) = run_gp('model', 'import', "$tmp/$t.json");
        is($c, 1, "model import of a $t config: refused, exit 1");
        is($e, "gpuplan: $tmp/$t.json: $field: a model with Mamba (state-space) layers is not imported "
             . "(its layers would be read as attention); a Megatron-Core hybrid is written as a catalog "
             . "model's hybrid_pattern and mamba (docs/models.md)\n", "$t: names the file and $field");
        is($o, '', "$t: no model printed");
    }
    write_file("$tmp/nh.lua", <<'LUA');
local gp = require "gpuplan"
print(pcall(gp.model_from_hf, { model_type = "nemotron_h", hidden_size = 64, num_hidden_layers = 2,
  num_attention_heads = 4, intermediate_size = 128, vocab_size = 100, hidden_act = "silu",
  hybrid_override_pattern = "M*" }, { id = "nh" }))
LUA
    ($c, $o, $e) = run_gp('run', "$tmp/nh.lua");
    like($o, qr/^false\t.*hybrid_override_pattern: a model with Mamba \(state-space\) layers is not imported/,
         'gp.model_from_hf refuses the decoded table alike') or diag "$o$e";
}

# 3. rl --loss-ops 1.5 and --gae-ops 1.5 (PPO): a fraction of a
# dispatched PyTorch op was priced (1.5 eager op times a sequence, a
# response position).  Whole numbers 0..1e6, as their help's counts
# (NeMo RL's 147, DeepSpeed-Chat's 5) are: the text no integer is a
# usage error (exit 2), past the range exit 1.
{
    for my $f (['--loss-ops'], ['--gae-ops', '--algo', 'ppo']) {
        my ($opt, @rest) = @$f;
        ($c, $o, $e) = run_gp('rl', 'llama3-8b', '--gpu', 'h100-sxm', '--gpus', '8', @rest, $opt, '1.5');
        is($c, 2, "rl $opt 1.5: a usage error");
        like($e, qr/^gpuplan: rl: option '$opt' expects an integer, got '1\.5'\n/, "$opt: names the option and the text");
        ($c, $o, $e) = run_gp('rl', 'llama3-8b', '--gpu', 'h100-sxm', '--gpus', '8', @rest, $opt, '2000000');
        is($c, 1, "rl $opt 2000000: out of range, exit 1");
        like($e, qr/^gpuplan: rl: $opt must be a whole number 0\.\.1000000 \(got 2000000\)\n/, "$opt: the range");
    }
}

# 4. Every shipped script answers --help with its usage, exit 0:
# check_claims.lua, which reads its own arguments (a claims file beside
# --format), said "unknown option --help", exit 2.
{
    opendir(my $dh, 'scripts') or die "scripts: $!";
    for my $f (sort grep { /\.lua$/ } readdir $dh) {
        ($c, $o, $e) = run_gp('run', "scripts/$f", '--help');
        is($c, 0, "run scripts/$f --help: exit 0") or diag $e;
        like($o, qr/^usage: gpuplan (run scripts\/\Q$f\E|guide) \[/, "$f: its usage line");
        like($o, qr/^  --format /m, "$f: lists --format") if $f eq 'check_claims.lua';
    }
}

# 5. model import --name '': the empty name was replaced by the id
# without a word (name = "ll"); refused, naming the file and the flag,
# exit 1 as the id's own check (--id '').
{
    write_file("$tmp/ll.json", '{"model_type":"llama","hidden_size":4096,"num_hidden_layers":32,"num_attention_heads":32,"num_key_value_heads":8,"intermediate_size":14336,"vocab_size":128256,"hidden_act":"silu","max_position_embeddings":8192,"rms_norm_eps":1e-5,"tie_word_embeddings":false}');
    ($c, $o, $e) = run_gp('model', 'import', "$tmp/ll.json", '--name', '');
    is($c, 1, "model import --name '': exit 1");
    is($e, "gpuplan: $tmp/ll.json: the name (--name) must not be empty\n", 'names the file and the flag');
    is($o, '', 'no entry printed');
    ($c, $o, $e) = run_gp('model', 'import', "$tmp/ll.json", '--name', 'Llama X');
    like($o, qr/^  name = "Llama X",$/m, 'a name given stands') or diag $e;
}

# 6. infer --kv: int4 and fp32 caches were taken (memory.lua's kv_bytes:
# 0.5 and 4 B an element) while the help and infer's refusal listed
# bf16, fp16, fp8, int8 and fp4 only.  The help and the refusal list
# what is taken.
{
    ($c, $o, $e) = run_gp('infer', 'llama3-8b', '--gpu', 'h100-sxm', '--kv', 'nvfp4');
    is($c, 2, 'infer --kv nvfp4: an unknown name, exit 2');
    like($e, qr/^gpuplan: infer: --kv: unknown kv dtype 'nvfp4' \(expected bf16\|fp16\|fp8\|int8\|fp4\|int4\|fp32\)\n/,
         'the refusal lists every dtype taken');
    for my $k ('int4', 'fp32') {
        ($c, $o, $e) = run_gp('infer', 'llama3-8b', '--gpu', 'h100-sxm', '--kv', $k);
        is($c, 0, "infer --kv $k: taken") or diag $e;
        like($o, qr/^llama3-8b on 1 x h100-sxm .*, $k KV,/m, "$k: the KV dtype named");
    }
    ($c, $o, $e) = run_gp('infer', '--help');
    like($o, qr/--kv K\s+KV-cache dtype: bf16\|fp16\|fp8\|int8\|fp4\|int4\|fp32 /, 'the help lists them');
}

# 7. --weights gptq-g1.5: the group's fraction was read as a scale dtype
# (".5": "scale dtype must be -fp16, -bf16 or -fp32"), naming the wrong
# part of the name.  The group size is named; a real scale suffix keeps
# its own message.
{
    for my $w ('gptq-g1.5', 'awq-g64x') {
        ($c, $o, $e) = run_gp('infer', 'llama3-8b', '--gpu', 'h100-sxm', '--weights', $w);
        is($c, 1, "--weights $w: exit 1, as the group size's range");
        is($e, "gpuplan: infer: --weights '$w': group size must be a whole number 1..65536\n", "$w: names the group size");
    }
    ($c, $o, $e) = run_gp('infer', 'llama3-8b', '--gpu', 'h100-sxm', '--weights', 'awq-g32-fp64');
    like($e, qr/scale dtype must be -fp16, -bf16 or -fp32/, 'a scale suffix of its own keeps the scale message');
}

done_testing();
