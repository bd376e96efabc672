# Hardening round 81: the files users write -- catalog extensions, case
# files -- refused at their file and line, with a non-zero exit, where a
# value was taken in silence or said at the wrong line; and output files
# written whole or not at all.  The tests marked "fix" fail on the tree
# before this round's fixes; the others pin what already held (the
# brief's list of broken inputs), so that it keeps holding.
use strict;
use warnings;
use Test::More;
require './tests/cli/lib.pl';
use File::Temp ();

my ($c, $o, $e);
my $dir = File::Temp::tempdir(CLEANUP => 1);
my $n = 0;

# A user's catalog directory holding one file of text; returns the dir.
sub cat_dir {
    my ($text) = @_;
    my $d = "$dir/cat" . ++$n;
    mkdir $d or die "$d: $!";
    write_file("$d/x.lua", $text);
    return $d;
}

# A GPU entry, one field a line (line 1 "gpu {", id on line 2, mem_bw on
# line 6, peak on line 7, scaleup on 8); $extra goes on line 11.
sub gpu_entry {
    my (%o) = @_;
    my $mem_bw = $o{mem_bw} // '"3.35TB/s"';
    my $peak = $o{peak} // '{ bf16 = "989TFLOPS" }';
    return "gpu {\n"
      . "  id = \"my-gpu\", name = \"My GPU\", vendor = \"NVIDIA\",\n"
      . "  arch = \"hopper\", form_factor = \"SXM\", year = 2024,\n"
      . "  memory = \"80GiB\", memory_type = \"HBM3\",\n"
      . "  tdp = \"700W\",\n"
      . "  mem_bw = $mem_bw,\n"
      . "  peak = $peak,\n"
      . "  scaleup = { fabric = \"nvlink4\", domain = 8 },\n"
      . "  source = \"me\",\n"
      . "  -- the field under test:\n"
      . "  " . ($o{extra} // '') . "\n"
      . "}\n";
}

# A model entry (layers etc. on line 3, params_b on line 6); $extra on 8.
sub model_entry {
    my ($extra) = @_;
    return "model {\n"
      . "  id = \"my-model\", name = \"Mine\", family = \"llama\",\n"
      . "  layers = 32, hidden = 4096, heads = 32, kv_heads = 8,\n"
      . "  ffn_hidden = 14336, ffn_gated = true, vocab = 32000,\n"
      . "  norm = \"rms\", max_seq = 32768,\n"
      . "  params_b = 8,\n"
      . "  source = \"me\",\n"
      . "  $extra\n"
      . "}\n";
}

# catalog check DIR: exit 1 and the one message, at FILE:LINE.
sub refused {
    my ($d, $line, $re, $what) = @_;
    my ($c, $o, $e) = run_gp('catalog', 'check', $d);
    is($c, 1, "$what: exit 1");
    like($e, qr/^\Q$d\E\/x\.lua:$line: (?:(?:gpu|model|system|fabric) '[^']*': )?$re/m,
         "$what: FILE:$line and the problem") or diag $e;
    unlike($e, qr/(?:engine\/\w+\.c|lua\/gpuplan\/[\w\/]+\.lua):\d+/, "$what: no internal position")
      or diag $e;
}

# 1. Catalog extension files.
{
    my $d = cat_dir(gpu_entry());
    ($c, $o, $e) = run_gp('catalog', 'check', $d);
    is($c, 0, 'the template entry checks') or diag $e;

    # fix: a field stated twice in one entry.  Lua keeps the last value of
    # a key repeated in a table constructor (Lua 5.4 manual 3.4.9) and
    # calls no metamethod: mem_bw = "2TB/s" on line 11 priced the card at
    # 2 TB/s in silence.
    refused(cat_dir(gpu_entry(extra => 'mem_bw = "2TB/s",')), 11,
            qr/gpu 'my-gpu': field 'mem_bw' stated twice in one table \(first at line 6\); Lua keeps the last in silence/,
            'mem_bw twice');
    refused(cat_dir(gpu_entry(peak => "{ bf16 = \"989TFLOPS\",\n           bf16 = \"1979TFLOPS\" }")), 8,
            qr/gpu 'my-gpu': field 'peak\.bf16' stated twice in one table \(first at line 7\)/,
            'peak.bf16 twice, nested');
    # and through a command: the search path refuses it as catalog check does
    {
        local $ENV{GPUPLAN_CATALOG} = cat_dir(gpu_entry(extra => 'mem_bw = "2TB/s",'));
        ($c, $o, $e) = run_gp('fit', 'llama2-7b', '--gpu', 'my-gpu');
        is($c, 1, 'fit on a catalog with a field twice: exit 1');
        like($e, qr/x\.lua:11: gpu 'my-gpu': field 'mem_bw' stated twice/, 'its file and line')
          or diag $e;
        is($o, '', 'nothing priced');
    }
    # The walk: strings, comments, long strings, sibling tables, a
    # function's body and ["key"] keys; the built-in catalog and the good
    # fixture state each field once.
    {
        my $f = "$dir/walk.lua";
        write_file($f, <<'LUA');
local files = require "gpuplan.files"
local function show(src) local l, m = files.lua_duplicate(src); print(l and (l .. ": " .. m) or "clean") end
show('gpu { a = 1, b = { a = 2 }, c = { a = 3 }, d = "a = 1, a = 2", --[[ a = 5 ]] e = [==[ a = ]] a = ]==] }')
show('gpu { f = function() local x = 1; x = 2 end, g = { 1, 2, x = 3 }, h = 1 == 1 }')
show('gpu { a = 1, -- a comment\n  --[[ and a long one ]] a = 2 }')
show('price({ a = 1,\n ["a"] = 2 })')
show('local t = { 1 }\nt.a = 1\nt.a = 2\nmodel(t)')
local lfs = require "lfs"
local bad = 0
local function walk(d)
  for name in lfs.dir(d) do
    local p = d .. "/" .. name
    if name:sub(1, 1) ~= "." and lfs.attributes(p, "mode") == "directory" then walk(p)
    elseif name:match("%.lua$") then
      local fh = assert(io.open(p, "rb")); local src = fh:read("a"); fh:close()
      local l, m = files.lua_duplicate(src)
      if l then bad = bad + 1; print(p .. ":" .. l .. ": " .. m) end
    end
  end
end
walk("catalog"); walk("tests/fixtures/catalog/good")
print("built-in: " .. bad)
LUA
        ($c, $o, $e) = run_gp('run', $f);
        is($c, 0, 'the walk runs') or diag $e;
        is($o, "clean\nclean\n2: gpu: field 'a' stated twice in one table (first at line 1); "
             . "Lua keeps the last in silence: state it once\n2: price: field 'a' stated twice in one table (first at line 1); "
             . "Lua keeps the last in silence: state it once\nclean\nbuilt-in: 0\n",
           'keys of one constructor only; the shipped catalog clean') or diag $o;
    }

    # fix: active_params_b above params_b (the published active share of
    # the total) loaded, and the listing printed it.
    refused(cat_dir(model_entry('active_params_b = 80,')), 8,
            qr/model 'my-model': field 'active_params_b': 80 B, more than params_b \(8 B\)/,
            'active_params_b > params_b');
    my $mixtral = cat_dir(model_entry('active_params_b = 7.5,'));
    ($c, $o, $e) = run_gp('catalog', 'check', $mixtral);
    is($c, 0, 'active_params_b below params_b: exit 0') or diag $e;

    # fix: a constructor handed two tables defined the first, dropped the second
    refused(cat_dir("gpu({ id = \"a\" },\n    { id = \"b\" })\n"), 1,
            qr/gpu\{\.\.\.\} takes one table, got 2 arguments/, 'gpu({...}, {...})');

    # fix: the engine's device and link checks at their field's line (they
    # were at the entry's first line)
    refused(cat_dir(gpu_entry(mem_bw => '"1B/s"')), 6,
            qr/gpu 'my-gpu': device mem_bw must be/, 'mem_bw of 1 B\/s at its line');
    refused(cat_dir(gpu_entry(peak => '{}')), 7, qr/gpu 'my-gpu': device has no compute peak/,
            'an empty peak at its line');
    refused(cat_dir("fabric {\n  id = \"slow\", name = \"slow\", scope = \"scaleup\", kind = \"nvlink\",\n"
                    . "  bw = \"900GB/s bidir\",\n  latency = \"100000s\",\n"
                    . "  achievable = 0.8, achievable_reason = \"x\", source = \"me\",\n}\n"), 4,
            qr/fabric 'slow': scale-up latency must be 0\.\.1 s \(got 100000\)/,
            'a link latency past 1 s at its line');

    # Held before this round (the brief's list): each at its field's line.
    refused(cat_dir(gpu_entry(mem_bw => 'nil')), 6,
            qr/gpu 'my-gpu': field 'mem_bw': required field is missing/, 'mem_bw missing');
    refused(cat_dir(gpu_entry(extra => 'sms = "132",')), 11,
            qr/field 'sms': expected a finite number, got "132"/, 'sms a string');
    refused(cat_dir(gpu_entry(mem_bw => '"-3.35TB/s"')), 6,
            qr/field 'mem_bw': bad bandwidth '-3\.35TB\/s': must not be negative/, 'mem_bw negative');
    refused(cat_dir(gpu_entry(mem_bw => '"0TB/s"')), 6,
            qr/field 'mem_bw': must be positive, got "0TB\/s"/, 'mem_bw zero');
    refused(cat_dir(gpu_entry(peak => '{ bf16 = "0TFLOPS" }')), 7,
            qr/field 'peak\.bf16': must be positive/, 'bf16 TFLOPS zero');
    refused(cat_dir(gpu_entry(peak => '{ bf16 = 0/0 }')), 7,
            qr/field 'peak\.bf16': bad compute 'NaN'/, 'bf16 NaN');
    refused(cat_dir(gpu_entry(peak => '{ bf16 = "1e999TFLOPS" }')), 7,
            qr/field 'peak\.bf16': bad compute '1e999TFLOPS': not a finite number/, 'bf16 infinite');
    refused(cat_dir(gpu_entry(extra => 'memroy_bw = 1,')), 11,
            qr/field 'memroy_bw': unknown field \(did you mean 'mem_bw'\?\)/, 'a field misspelt');
    refused(cat_dir(model_entry('heads = 24,')), 3,
            qr/model 'my-model': heads \(24\) must divide hidden \(4096\) unless head_dim is given/,
            'heads not dividing hidden');
    refused(cat_dir(model_entry('moe = { experts = 8, top_k = 9, ffn_hidden = 14336 },')), 8,
            qr/moe\.top_k must be in 1\.\.experts \(8\), got 9/, 'MoE top_k > experts');
    refused(cat_dir("system {\n  id = \"box\", name = \"box\",\n  gpu = \"h100-sxn\", gpus = 8,\n"
                    . "  scaleup = \"nvlink4\", nics = 0, host_memory = \"2TB\", "
                    . "host_mem_bw = \"614.4GB/s\",\n  cpu = \"x\", source = \"me\",\n}\n"), 3,
            qr/system 'box': field 'gpu': unknown gpu 'h100-sxn'/, 'a system on an unknown gpu');
    refused(cat_dir(gpu_entry() . gpu_entry()), 13,
            qr/duplicate gpu 'my-gpu' \(first defined at \S+x\.lua:1\)/, 'an id twice');
}

# 2. Case files.
my $base;
{
    open(my $fh, '<', 'validation/cases.json') or die $!;
    my $all = do { local $/; <$fh> };
    close $fh;
    require JSON::PP;
    my ($case) = grep { $_->{id} eq 'bloom176b-train-tflops' } @{ JSON::PP->new->decode($all) };
    $base = $case;
}
my $json = JSON::PP->new->canonical->pretty;
sub case_file {
    my ($text) = @_;
    my $f = "$dir/case" . ++$n . ".json";
    write_file($f, $text);
    return $f;
}
sub case_refused {
    my ($f, $code, $line, $re, $what) = @_;
    my ($c, $o, $e) = run_gp('validate', $f, '--format', 'csv');
    is($c, $code, "$what: exit $code");
    like($e, qr/^gpuplan: \Q$f\E:$line: (?:case '[^']*': )?$re/m, "$what: FILE:$line") or diag $e;
    is($o, '', "$what: no case predicted");
}
{
    # fix: an empty file, blanks, a byte-order mark: each at line 1 in words
    # (were "Expected value but found T_END at column 1" and "invalid token")
    case_refused(case_file(''), 1, 1, qr/the file is empty \(no JSON value\)$/, 'an empty case file');
    case_refused(case_file("  \n\n"), 1, 1, qr/the file is empty/, 'a case file of blanks');
    case_refused(case_file("\xEF\xBB\xBF" . $json->encode([$base])), 1, 1,
                 qr/invalid JSON: the file starts with a UTF-8 byte-order mark/, 'a byte-order mark');
    # fix: a case alone as an object, no [ ]: its line and what it held (was
    # "FILE: expected a JSON array of cases", no line)
    case_refused(case_file("\n" . $json->encode($base)), 1, 2,
                 qr/expected a JSON array of cases \(\[\{\.\.\.\}, \.\.\.\]\), got an object \(one case\? put it in \[ \]\)/,
                 'a top-level object');
    case_refused(case_file('"x"'), 1, 1, qr/expected a JSON array of cases .*got a string/,
                 'a top-level string');
    # model import reads config.json through the same words
    my $cfg = case_file('');
    ($c, $o, $e) = run_gp('model', 'import', $cfg);
    is($c, 1, 'model import of an empty config.json: exit 1');
    like($e, qr/\Q$cfg\E:1: the file is empty/, 'its file and line') or diag $e;
    # fix: a config.json that is an array: at its line (was "FILE: top
    # level is not a JSON object", no line)
    $cfg = case_file("\n[1, 2]\n");
    ($c, $o, $e) = run_gp('model', 'import', $cfg);
    is($c, 1, 'model import of an array: exit 1');
    like($e, qr/^gpuplan: \Q$cfg\E:2: top level is not a JSON object \(a config\.json is one \{\.\.\.\}\)$/m,
         'its file and line') or diag $e;

    # fix: the case id: empty (a row with no name, no --explain), a control
    # character (a newline broke the text table's row)
    my %c = %$base;
    for my $t (['', qr/field 'id': must not be empty/, 'an empty id'],
               ["a\nb", qr/field 'id': control character "\\n" at byte 2/, 'a newline in the id'],
               ["a\tb", qr/field 'id': control character "\\9" at byte 2/, 'a tab in the id']) {
        $c{id} = $t->[0];
        my $text = $json->encode([\%c]);
        my @lines = split /\n/, $text;
        my ($l) = grep { $lines[$_ - 1] =~ /"id"/ } 1 .. @lines;
        case_refused(case_file($text), 1, $l, qr/case 1: $t->[1]/, $t->[2]);
    }
    $c{id} = 'a b.c/d:e';
    ($c, $o, $e) = run_gp('validate', case_file($json->encode([\%c])), '--format', 'csv');
    is($c, 0, 'an id of printable text: exit 0') or diag $e;

    # Held before this round (the brief's list): file, line, case id.
    my $id = $base->{id};
    my $edit = sub {
        my ($f) = @_;
        my $x = JSON::PP->new->decode(JSON::PP->new->encode($base));
        $f->($x);
        return $json->encode([$x]);
    };
    my $line_of = sub {
        my ($text, $re) = @_;
        my @l = split /\n/, $text;
        my ($i) = grep { $l[$_] =~ $re } 0 .. $#l;
        return $i + 1;
    };
    for my $t (
        [sub { delete $_[0]{measured}{value} }, qr/"measured"/, 1,
         qr/case '\Q$id\E': field 'measured\.value': missing \(the measured number\)/, 'measured value missing'],
        [sub { $_[0]{measured}{value} = -150 }, qr/"value"/, 1,
         qr/case '\Q$id\E': field 'measured\.value': must be a positive finite number/, 'measured negative'],
        [sub { $_[0]{measured}{value} = 0 }, qr/"value"/, 1,
         qr/field 'measured\.value': must be a positive finite number/, 'measured zero'],
        # fix: at the kind's line (was the case's first line)
        [sub { $_[0]{kind} = 'trian' }, qr/"kind"/, 2, qr/case '\Q$id\E': unknown kind 'trian'/, 'an unknown kind'],
        [sub { $_[0]{measured}{metric} = 'hfu_tflop_per_gpu' }, qr/"metric"/, 2,
         qr/field 'measured\.metric': 'hfu_tflop_per_gpu' is not a train metric/, 'an unknown metric'],
        [sub { $_[0]{parallel}{tpp} = 4 }, qr/"tpp"/, 1,
         qr/field 'parallel\.tpp': unknown field \(did you mean 'pp'\?\)/, 'a config key misspelt'],
        [sub { $_[0]{parallel}{tp} = "4" }, qr/"tp"/, 1,
         qr/field 'parallel\.tp': expected a finite number, got "4"/, 'a count as a string'],
    ) {
        my $text = $edit->($t->[0]);
        case_refused(case_file($text), $t->[2], $line_of->($text, $t->[1]), $t->[3], $t->[4]);
    }
    # truncated JSON: its line and column
    my $text = $json->encode([$base]);
    my $cut = substr($text, 0, 700);
    case_refused(case_file($cut), 1, scalar(() = $cut =~ /\n/g) + 1, qr/invalid JSON: .* at column \d+$/,
                 'truncated JSON');
    # an unknown gpu is the predictor's refusal: its row names the file,
    # the line and the case (validation/SCHEMA.md, "not predicted")
    $text = $edit->(sub { $_[0]{hardware}{gpu} = 'a100-sxm-8gb' });
    my $f = case_file($text);
    ($c, $o, $e) = run_gp('validate', $f, '--format', 'csv');
    is($c, 0, 'an unknown gpu: not predicted, the run goes on');
    my $l = $line_of->($text, qr/"gpu"/);
    like($o, qr/\Q$f\E:$l: case '\Q$id\E': field 'hardware\.gpu': unknown gpu 'a100-sxm-8gb' \(did you mean a100-sxm-80gb/,
         'its reason: FILE:LINE, the case, the field') or diag $o;
}

# 3. Output files: written whole or not at all; an unwritable path is
# refused before any work, naming the argument, and leaves nothing.
{
    my $out = "$dir/out";
    mkdir $out;
    mkdir "$out/p-memory.svg";
    ($c, $o, $e) = run_gp('plan', 'llama2-7b', '--gpu', 'h100-sxm', '--svg', "$out/p");
    is($c, 1, 'plan --svg, one of its three files a directory: exit 1');
    like($e, qr/^gpuplan: plan: --svg: cannot write '\Q$out\E\/p-memory\.svg': it is a directory, not a regular file$/m,
         'the argument and the file named') or diag $e;
    opendir(my $dh, $out) or die $!;
    my @left = sort grep { !/^\.\.?$/ } readdir $dh;
    closedir $dh;
    is_deeply(\@left, ['p-memory.svg'], 'no other file written, no temporary left');
    ($c, $o, $e) = run_gp('roofline', '--gpu', 'h100-sxm', '--svg', "$dir/nodir/x.svg");
    is($c, 1, 'roofline --svg into a missing directory: exit 1');
    like($e, qr/roofline: --svg: cannot write '\Q$dir\E\/nodir\/x\.svg': its directory '\Q$dir\E\/nodir' does not exist/,
         'the argument and the directory named') or diag $e;
    is($o, '', 'refused before the table');
    write_file("$out/r.svg", "old\n");
    ($c, $o, $e) = run_gp('roofline', '--gpu', 'h100-sxm', '--svg', "$out/r.svg");
    is($c, 0, 'roofline --svg over a file: exit 0') or diag $e;
    open(my $fh, '<', "$out/r.svg") or die $!;
    my $svg = do { local $/; <$fh> };
    close $fh;
    like($svg, qr/\A<\?xml|\A<svg/, 'the file replaced whole') or diag substr($svg, 0, 80);
    like($svg, qr/<\/svg>\s*\z/, 'to its end');
}

done_testing();
