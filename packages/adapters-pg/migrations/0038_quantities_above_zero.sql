-- 0038_quantities_above_zero.sql: an entry of recorded quantities keeps at least one of good, scrap, rework above 0.
--
-- A create is refused by the domain (422 MIN_VALUE on good), but a PATCH changes only the fields it gives: setting
-- good and scrap to 0 on an entry without rework left an entry of nothing (DECISIONS: Quantities). Like the
-- scrap-reason check beside it, the merged row is checked by the PATCH's own statement, and the violation is mapped
-- to the create's 422 detail (`constraints.ts`). NOT VALID: entries such a PATCH already emptied stay readable
-- (a later change to one must give it a quantity); every insert and update from now on is checked.
ALTER TABLE operation_quantities ADD CONSTRAINT operation_quantities_some_quantity_check
  CHECK (good > 0 OR scrap > 0 OR rework > 0) NOT VALID;
