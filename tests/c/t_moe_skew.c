/*
 * t_moe_skew.c - the busiest expert-parallel rank under dropless routing
 * that is even in expectation (engine/model.c model_moe_pick_var,
 * model_ep_chance_skew, model_max_dev), against hand derivations.
 *
 * Each per-token variance below is the closed form worked by hand; a
 * Monte Carlo of 200,000 tokens (random.sample of the groups, then of the
 * experts in them) agreed to 0.2% (0.4432, 0.2836, 2.9285), which is the
 * check that the closed forms are the routing's, not the tolerance.  The
 * tolerances are the hand values' rounding: 1e-6 relative on values
 * written to 7 digits.
 */
#include "model.h"
#include "tap.h"

#include <math.h>

#define HAND 1e-6

int main(void)
{
	double sd, skew;

	plan(18);

	/* No groups: hypergeometric, 8 picks of 128 experts, 8 of them
	 * the rank's (Qwen3-30B-A3B on EP 16):
	 * 8 (8/128)(120/128)(120/127) = 0.4429134. */
	is_num(model_moe_pick_var(128, 8, 8, 0, 0), 0.4429134, HAND,
	       "ungrouped: 8 (1/16)(15/16)(120/127)");
	/* groups 1 is no group limit: the same. */
	is_num(model_moe_pick_var(128, 8, 8, 1, 1), 0.4429134, HAND,
	       "one group: ungrouped");

	/* DeepSeek-V3 on EP 32: 256 experts in 8 groups of 32, 4 groups
	 * picked, then 8 experts of those 128; a rank's 8 experts lie in
	 * one group.  p = 4/8, m = 8 x 8 / 128 = 0.5,
	 * v = 8 (8/128)(120/128)(120/127) = 0.4429134,
	 * var = p (v + m^2) - (p m)^2 = 0.5 x 0.6929134 - 0.0625 = 0.2839567. */
	is_num(model_moe_pick_var(256, 8, 8, 8, 4), 0.2839567, HAND,
	       "DeepSeek-V3 EP 32: rank inside a group");

	/* DeepSeek-V3 on EP 4: a rank holds 64 experts, r = 2 whole groups.
	 * J ~ hypergeometric(8 groups, 2 the rank's, 4 picked): E J = 1,
	 * Var J = 4 (2/8)(6/8)(4/7) = 0.4285714; c = 120/127;
	 * E[J (4 - J)] = 4 x 1 - 0.4285714 - 1 = 2.5714286;
	 * var = 8 c 2.5714286 / 16 + (8/4)^2 0.4285714
	 *     = 1.2148481 + 1.7142857 = 2.9291339. */
	is_num(model_moe_pick_var(256, 64, 8, 8, 4), 2.9291339, HAND,
	       "DeepSeek-V3 EP 4: rank of two whole groups");

	/* A rank across a group's edge (EP 3 does not divide): the
	 * ungrouped rule, k (el/E)(1 - el/E)(E - k)/(E - 1). */
	is_num(model_moe_pick_var(256, 256.0 / 3.0, 8, 8, 4),
	       8.0 * (1.0 / 3.0) * (2.0 / 3.0) * 248.0 / 255.0, HAND,
	       "a rank across a group edge: ungrouped");

	/* Tippett's E[max] of N standard normals (Biometrika 17, 1925),
	 * times sqrt(N / (N - 1)) for counts of a fixed total:
	 * N = 16: 1.7659914 x 1.0327956 = 1.8239081;
	 * N = 32: 2.0696688 x 1.0159929 = 2.1027856. */
	is_num(model_max_dev(16), 1.8239081, HAND, "max_dev(16)");
	is_num(model_max_dev(32), 2.1027856, HAND, "max_dev(32)");
	ok(model_max_dev(1) == 0.0, "max_dev of one rank: 0");

	/* DeepSeek-V3 on EP 32, micro-batch 1 of 4096 tokens a rank: the
	 * EP group routes 32 x 4096 = 131,072 tokens; a rank receives
	 * 131072 x 0.25 = 32,768 picks, sd sqrt(131072 x 0.2839567) =
	 * 192.92; skew = 1 + 2.1027856 x 192.92 / 32768 = 1.012380. */
	sd = sqrt(131072.0 * 0.2839567);
	skew = model_ep_chance_skew(32, 256, 8, 8, 4, 131072);
	is_num(skew, 1.0 + 2.1027856 * sd / 32768.0, HAND,
	       "DeepSeek-V3 EP 32, 131,072 tokens: 1.0124");
	ok(fabs(skew - 1.01238) < 1e-5, "... which is 1.01238");

	/* Qwen3-30B-A3B on EP 16, 4096 tokens a rank: 65,536 tokens,
	 * mean 32,768 picks a rank, sd sqrt(65536 x 0.4429134) = 170.37:
	 * 1 + 1.8239081 x 170.37 / 32768 = 1.009483. */
	is_num(model_ep_chance_skew(16, 128, 8, 0, 0, 65536),
	       1.0 + 1.8239081 * sqrt(65536.0 * 0.4429134) / 32768.0, HAND,
	       "Qwen3-30B-A3B EP 16, 65,536 tokens: 1.0095");

	/* Chance shrinks as 1 / sqrt(tokens): four times the tokens,
	 * half the excess (exact up to rounding). */
	is_num(model_ep_chance_skew(16, 128, 8, 0, 0, 4 * 65536) - 1.0,
	       0.5 * (model_ep_chance_skew(16, 128, 8, 0, 0, 65536) - 1.0),
	       1e-12, "4x the tokens: half the excess");

	/* No EP, no tokens, one expert a token on two ranks of one
	 * expert each (top 2 of 2: every token on both): no skew. */
	ok(model_ep_chance_skew(1, 128, 8, 0, 0, 65536) == 1.0, "EP 1: 1");
	ok(model_ep_chance_skew(16, 128, 8, 0, 0, 0) == 1.0, "no tokens: 1");
	ok(model_ep_chance_skew(2, 2, 2, 0, 0, 4096) == 1.0,
	   "top 2 of 2 experts on 2 ranks: every token on both, 1");
	/* Few tokens: capped at N min(k, el) / k (a rank takes at most
	 * min(k, el) of a token's k picks): 8 ranks of one expert, top 1,
	 * one token: at most 8. */
	ok(model_ep_chance_skew(8, 8, 1, 0, 0, 1) <= 8.0,
	   "one token: at most N min(k, el) / k");
	/* ... a bound the normal rule crosses where a token's picks
	 * outnumber a rank's experts: 8 ranks of one expert, top 4, one
	 * token: var = 4 (1/8)(7/8)(4/7) = 0.25, mean 4/8 = 0.5, so the
	 * rule gives 1 + max_dev(8) x 0.5 / 0.5 = 1 + 1.5222 = 2.52, but a
	 * rank of one expert takes at most 1 of the 4 picks: 8 x 1 / 4 =
	 * 2 exactly (the first check above never reaches its bound). */
	ok(1.0 + model_max_dev(8) * sqrt(0.25) / 0.5 > 2.0,
	   "top 4 over 8 one-expert ranks: the normal rule passes 2");
	is_num(model_ep_chance_skew(8, 8, 4, 0, 0, 1), 2.0, HAND,
	       "... and the skew is capped at N min(k, el) / k = 2");
	return done();
}
