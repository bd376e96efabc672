/*
 * recipes.h - the shipped precision recipes and optimizers as the C tests
 * use them: the figures of catalog/recipes.lua, where each has its source
 * (the catalog is what gpuplan reads; tests/lua/memory.t checks the
 * catalog's entries give the same bytes per parameter).
 */
#ifndef GP_TEST_RECIPES_H
#define GP_TEST_RECIPES_H

#include "memory_states.h"

/*                                        w  g  m  st red act off sh0 rp */
static const gp_recipe FX_MIXED16     = {2, 2, 4, 4, 2, 2, 2, 0, 0};
static const gp_recipe FX_MEGATRON18  = {2, 4, 4, 4, 4, 2, 2, 0, 0};
static const gp_recipe FX_FP32        = {4, 4, 0, 4, 4, 4, 4, 0, 0};
static const gp_recipe FX_BF16        = {2, 2, 0, 2, 2, 2, 2, 0, 0};
static const gp_recipe FX_FP8         = {3, 4, 4, 4, 4, 2, 2, 0, 0};
static const gp_recipe FX_DSBF16      = {2, 6, 4, 4, 2, 2, 2, 1, 1};

/*                   states state foreach_adamw scalar_states ns_steps dp_shard */
static const gp_optim FX_ADAMW    = {2, 0, 1, 0, 0, 0};
static const gp_optim FX_ADAM8BIT = {2, 1.0 + 4.0 / 2048.0, 0, 0, 0, 0};
static const gp_optim FX_SGD      = {1, 0, 0, 0, 0, 0};
static const gp_optim FX_MUON     = {1, 0, 0, 2, 5, 1};

#endif
