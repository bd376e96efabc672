-- Exchange rates and the defaults a user catalog may override.
--
-- A rate comes from a central bank's published reference rate, with its
-- date: for CNY the People's Bank of China central parity, which the China
-- Foreign Exchange Trade System (CFETS) publishes at 9:15 Beijing time each
-- business day on the PBOC's authority (equivalents: the Federal Reserve's
-- H.10 noon buying rate, the ECB euro reference rates). Rental prices are
-- dated months apart and spread by 2-5x between providers; a rate a few
-- months old moves them by a few percent. Override with your own dated
-- rate in a user catalog: currency { id = "CNY", per_usd = ..., date = ... }.

currency {
  id = "CNY", per_usd = 7.0197, date = "2026-01-08",
  source = "PBOC central parity of the yuan, published by the China Foreign Exchange "
        .. "Trade System on 2026-01-08: USD 1 = CNY 7.0197 (10 pips weaker than the "
        .. "day before), as reported by MENAFN 'Chinese Yuan Edges Down Against U.S. "
        .. "Dollar' (menafn.com/1110571586)",
  notes = "Replaces an earlier 7.0 taken from web articles that are not sources "
       .. "of exchange rates. The yuan may trade 2% either side of the parity.",
}

settings { currency = "USD", safety_margin = 0.10 }
