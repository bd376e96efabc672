-- Exchange rates and the defaults a user catalog may override.

currency {
  id = "CNY", per_usd = 7.0, date = "2026-01",
  source = "pixelation.org and namegenerator.biz articles: USD/CNY 'around 6.97' in "
        .. "mid-January 2026",
  notes = "Other early-2026 pages give 7.15 (visualfoodie.com) and 7.20-7.35; the "
       .. "rate moves a few percent a year, less than the spread of rental "
       .. "prices. Override with a dated rate in a user catalog.",
}

settings { currency = "USD", safety_margin = 0.10 }
