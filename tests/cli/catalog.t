# gpuplan catalog check / list / show / --explain on fixture directories.
use strict;
use warnings;
use Test::More;
use File::Temp qw(tempdir);
require './tests/cli/lib.pl';

my $F = 'tests/fixtures/catalog';

# With good/ first: its arch 'testarch' is what the bad files' GPUs use.
my ($c, $o, $e) = run_gp('catalog', 'check', "$F/good", "$F/bad");
is($c, 1, 'check of a broken directory exits 1');
my @lines = grep { /^\Q$F\E\/bad\// } split /\n/, $e;
opendir(my $dh, "$F/bad") or die;
my @files = sort grep { /\.lua$/ } readdir $dh;
closedir $dh;
is(scalar @lines, scalar @files, 'one error per broken file');
for my $f (@files) {
    ok((grep { /^\Q$F\E\/bad\/\Q$f\E:\d+: / } @lines) == 1, "error for $f names file:line");
}
like($e, qr/gpu 'unknown': field 'colour': unknown field/, 'unknown field is named');
like($e, qr/gpuplan: \d+ errors in \Q$F\E\/good, \Q$F\E\/bad$/m, 'summary line');

# Escape attempts (huge strings, string methods, recursion, editing an
# entry after it was checked): one error per file, exit 1, no crash.
($c, $o, $e) = run_gp('catalog', 'check', "$F/good", "$F/escape");
is($c, 1, 'check of escape attempts exits 1');
@lines = grep { /^\Q$F\E\/escape\// } split /\n/, $e;
opendir($dh, "$F/escape") or die;
@files = sort grep { /\.lua$/ } readdir $dh;
closedir $dh;
is(scalar @lines, scalar @files, 'one error per escape attempt');
like($e, qr/concat_bomb.lua:3: catalog file uses too much memory/, 'memory bomb stopped cleanly');
unlike($e, qr/stack traceback/, 'no traceback');

($c, $o, $e) = run_gp('catalog', 'check', "$F/nope");
is($c, 1, 'missing directory exits 1');
like($e, qr/no such directory: \Q$F\E\/nope/, 'missing directory named');

($c, $o, $e) = run_gp('catalog', 'check');
is($c, 2, 'check without DIR is a usage error');

($c, $o, $e) = run_gp('catalog', 'show', 'no-such-gpu');
is($c, 1, 'unknown id exits 1');
like($e, qr/unknown id 'no-such-gpu'/, 'unknown id named');

# A user directory on GPUPLAN_CATALOG adds a GPU without recompiling and
# --explain reports where it came from and what it overrides.
{
    local $ENV{GPUPLAN_CATALOG} = "$F/good:$F/override";
    local $ENV{XDG_CONFIG_HOME} = '/nonexistent';
    ($c, $o, $e) = run_gp('catalog', 'show', 'testgpu-48g', '--format', 'csv');
    is($c, 0, 'user GPU is shown') or diag $e;
    like($o, qr/^memory,51539607552$/m, 'user GPU memory in bytes');
    ($c, $o, $e) = run_gp('catalog', '--explain', 'testgpu-48g/acme/us');
    is($c, 0, '--explain exits 0');
    like($o, qr/price 'testgpu-48g\/acme\/us' defined at \Q$F\E\/override\/price.lua:2/, '--explain names the defining file');
    like($o, qr/overrides \Q$F\E\/good\/tiny.lua:24/, '--explain names the overridden definition');
    ($c, $o, $e) = run_gp('catalog', 'list', 'gpus', '--format', 'csv');
    like($o, qr/^testgpu-48g,Test GPU 48GB,/m, 'user GPU listed');
}
# Misplaced arguments are usage errors, not silently ignored.
($c, $o, $e) = run_gp('catalog', 'list', '--explain');
is($c, 2, '--explain with list is a usage error');
like($e, qr/--explain goes with an ID/, 'and says where it goes');
($c, $o, $e) = run_gp('catalog', 'list', 'gpus', 'extra');
is($c, 2, 'an extra argument to list exits 2');
like($e, qr/catalog list: unexpected argument 'extra'/, 'extra argument named');
($c, $o, $e) = run_gp('catalog', 'show', 'h100-sxm', 'extra');
is($c, 2, 'an extra argument to show exits 2');

# GPUPLAN_CATALOG naming a file or a missing directory: the error says
# where the name came from.
{
    local $ENV{GPUPLAN_CATALOG} = "$F/good/tiny.lua";
    ($c, $o, $e) = run_gp('catalog', 'list');
    is($c, 1, 'GPUPLAN_CATALOG naming a file exits 1');
    like($e, qr/^gpuplan: not a directory: \Q$F\E\/good\/tiny.lua \(from GPUPLAN_CATALOG\)$/, 'and names it and the variable');
    $ENV{GPUPLAN_CATALOG} = "$F/nope";
    ($c, $o, $e) = run_gp('catalog', 'list');
    like($e, qr/^gpuplan: no such directory: \Q$F\E\/nope \(from GPUPLAN_CATALOG\)$/, 'missing directory too');
}

# good/tiny.lua defines an arch, a fabric, a GPU and a price.
($c, $o, $e) = run_gp('catalog', 'check', "$F/good");
is($o, "ok: 4 entries in $F/good\n", 'check counts the directory\'s entries');

# A card without a measured usable_memory shows the derived one and says
# so (catalog/FORMAT.md): H20 96 GiB x 0.989 = 101945343737.9 -> "%.0f".
($c, $o, $e) = run_gp('catalog', 'show', 'h20');
like($o, qr/^usable_memory\s+101945343738 \(derived: memory x 0\.989\)$/m, 'show h20: derived usable_memory');
($c, $o, $e) = run_gp('catalog', 'show', 'h100-sxm');
unlike($o, qr/derived/, 'show h100-sxm: its measured usable_memory, not derived');

# A broken user catalog is the same error in every command that prices
# against it: its file and line, exit 1.  Inside a command it was taken
# for the command's own: comm dropped the line (or blamed --system), rl
# kept the reason alone, validate blamed the first case's model.
{
    my $dir = tempdir(CLEANUP => 1);
    write_file("$dir/mine.lua", "model { id = \"tiny\", name = \"Tiny\", layers = 2, hidden = 96, "
        . "heads = 3, kv_heads = 3, vocab = 1000, ffn_hidden = 256, max_seq = 1024, source = \"x\" }\n");
    local $ENV{GPUPLAN_CATALOG} = $dir;
    my $want = qr/^gpuplan: \Q$dir\E\/mine\.lua:1: model 'tiny': field 'params_b': required field is missing$/;
    for my $cmd (['comm', '--gpu', 'h100-sxm', '--max', '64'],
                 ['comm', '--system', 'dgx-h100', '--max', '64'],
                 ['rl', 'qwen2.5-7b', '--gpu', 'h100-sxm', '--gpus', '8'],
                 ['validate'],
                 ['fit', 'llama3-8b', '--gpu', 'h100-sxm'],
                 ['roofline', '--gpu', 'h100-sxm']) {
        ($c, $o, $e) = run_gp(@$cmd);
        is($c, 1, "@$cmd with a broken user catalog: exit 1");
        like($e, $want, "@$cmd: the catalog file's line and the reason") or diag $e;
    }
    # catalog check reads the directories it is given, not the search path
    ($c, $o, $e) = run_gp('catalog', 'check', "$F/good");
    is($c, 0, 'catalog check DIR does not need the search path to load');
}

# A user model whose fields miss its stated size by 2x or more: every
# command prices the fields, and only the listing showed params_b, so a
# wrong field went unseen.  Llama 2 7B's fields (32 layers, hidden 4096,
# 32 heads, ffn_hidden 11008, vocab 32000, the head tied to the embedding
# as the schema defaults it) count within 2% of 6.74e9; with 3 layers for
# 32 (a dropped digit) 3 x 0.20e9 (4 x 4096^2 + 3 x 4096 x 11008 a layer)
# and the 0.13e9 embedding: about 0.74e9, 9x under.
{
    my $dir = tempdir(CLEANUP => 1);
    my $m = 'model { id = "my-7b", name = "Mine", layers = %d, hidden = 4096, heads = 32, kv_heads = 32, '
          . 'ffn_hidden = 11008, vocab = 32000, params_b = 6.74, source = "x" }' . "\n";
    write_file("$dir/m.lua", sprintf($m, 32));
    ($c, $o, $e) = run_gp('catalog', 'check', $dir);
    is($c, 0, 'fields that count the stated 6.74 B: accepted') or diag $e;
    write_file("$dir/m.lua", sprintf($m, 3));
    ($c, $o, $e) = run_gp('catalog', 'check', $dir);
    is($c, 1, '3 layers for 32: refused');
    like($e, qr/^\Q$dir\E\/m\.lua:1: model 'my-7b': field 'params_b': 6\.74 B, but the architecture \(layers, hidden, heads, ffn_hidden, vocab, moe, vision\) counts 0\.7\d+ B: a field is wrong$/m,
         'names the file, the line, the field and both counts');
}

done_testing();
