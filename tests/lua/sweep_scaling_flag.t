-- The flag under the scaling floor (0.6, the seed guides' rule) never
-- prints a value that reads as the floor itself.
local t = require "tap"
local sweep = require "gpuplan.sweep"

t.is(sweep.SCALING_FLOOR, 0.6, "the floor is the guides' 0.6")
-- 0.41 is two decimals' own value: printed as is.
t.is(sweep.scaling_shown(0.41), "0.41", "two decimals where they are below the floor")
-- 0.597 rounds to 0.60 at two decimals, which would read "0.60 < 0.6":
-- three decimals give 0.597.
t.is(sweep.scaling_shown(0.597), "0.597", "three decimals where two round up to the floor")
-- 0.59996 rounds to 0.600 at three and 0.6000 at four: five give 0.59996.
t.is(sweep.scaling_shown(0.59996), "0.59996", "as many as it takes, up to six")
t.done_testing()
