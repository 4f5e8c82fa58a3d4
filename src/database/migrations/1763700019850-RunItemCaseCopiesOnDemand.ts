import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Database size (issue #23 item 1): a run item no longer stores copies of its test case's key,
 * title, priority and tags while they equal the case's own values.
 *
 * What a read shows is unchanged (reference §3.3): the live case's values while the case exists
 * (`coalesce(tc.x, ri.x)`), and once it is deleted the values the case had when the item was
 * added to its run. Those copies were written with every item (about 135 bytes a row, 138 MB of
 * the bench's 1,000,000 items) and read only after a deletion. Now an item's copies are NULL
 * ("the same as the case"; a copy's title is never NULL, as a case's title is NOT NULL) until the
 * case stops having those values, and triggers on `test_cases` write them at that moment, so no
 * writer can forget it:
 *
 * - `trg_test_cases_item_copies_update` (AFTER UPDATE, statement-level, transition tables, one
 *   set-based UPDATE): when a case's key, title, priority or tags change, its items without copies
 *   get the values from before the change, i.e. those they were added with. Items that already hold
 *   copies (added before an earlier change) keep theirs; items added later have none and follow the
 *   case until its next change.
 * - `trg_test_cases_item_copies_delete` (BEFORE DELETE, per row): a deleted case's items without
 *   copies get its last values, and their `test_case_id` becomes NULL in the same UPDATE (what
 *   `fk_run_items_test_case` ON DELETE SET NULL would do next; it then finds nothing). A
 *   statement-level AFTER DELETE trigger cannot do this: the key's SET NULL is an after-row action,
 *   which runs before every after-statement trigger, so by then the items no longer name their
 *   case. The foreign key's own action is per deleted case as well, so this costs a deletion about
 *   what the key already cost.
 *
 * `test_case_tags` becomes nullable without a default (an empty array was 16 bytes a row). The
 * existing items' copies that equal their live case's values become NULL; copies that differ (the
 * case changed since) and those of deleted cases stay. `down` writes the copies back from the live
 * cases. Space freed by `up` on an existing table is reused by new rows; `VACUUM FULL run_items`
 * (or pg_repack) returns it to the operating system at once.
 */
export class RunItemCaseCopiesOnDemand1763700019850 implements MigrationInterface {
  name = 'RunItemCaseCopiesOnDemand1763700019850';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE run_items ALTER COLUMN test_case_tags DROP NOT NULL`);
    await q.query(`ALTER TABLE run_items ALTER COLUMN test_case_tags DROP DEFAULT`);
    await q.query(`
      CREATE FUNCTION run_items_case_copies_on_update() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        UPDATE run_items ri
           SET test_case_key = o.key, test_case_title = o.title,
               test_case_priority = o.priority, test_case_tags = o.tags
          FROM old_rows o JOIN new_rows n ON n.id = o.id
         WHERE ri.test_case_id = o.id AND ri.test_case_title IS NULL
           AND (o.key, o.title, o.priority, o.tags) IS DISTINCT FROM (n.key, n.title, n.priority, n.tags);
        RETURN NULL;
      END $$`);
    await q.query(`
      CREATE TRIGGER trg_test_cases_item_copies_update AFTER UPDATE ON test_cases
        REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
        FOR EACH STATEMENT EXECUTE FUNCTION run_items_case_copies_on_update()`);
    await q.query(`
      CREATE FUNCTION run_items_case_copies_on_delete() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        UPDATE run_items
           SET test_case_id = NULL,
               test_case_key = CASE WHEN test_case_title IS NULL THEN OLD.key ELSE test_case_key END,
               test_case_priority = CASE WHEN test_case_title IS NULL THEN OLD.priority
                                         ELSE test_case_priority END,
               test_case_tags = CASE WHEN test_case_title IS NULL THEN OLD.tags ELSE test_case_tags END,
               test_case_title = coalesce(test_case_title, OLD.title)
         WHERE test_case_id = OLD.id;
        RETURN OLD;
      END $$`);
    await q.query(`
      CREATE TRIGGER trg_test_cases_item_copies_delete BEFORE DELETE ON test_cases
        FOR EACH ROW EXECUTE FUNCTION run_items_case_copies_on_delete()`);
    await q.query(`
      UPDATE run_items ri
         SET test_case_key = NULL, test_case_title = NULL, test_case_priority = NULL,
             test_case_tags = NULL
        FROM test_cases tc
       WHERE tc.id = ri.test_case_id
         AND ri.test_case_key IS NOT DISTINCT FROM tc.key::text
         AND ri.test_case_title IS NOT DISTINCT FROM tc.title::text
         AND ri.test_case_priority IS NOT DISTINCT FROM tc.priority::text
         AND ri.test_case_tags IS NOT DISTINCT FROM tc.tags`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TRIGGER trg_test_cases_item_copies_delete ON test_cases`);
    await q.query(`DROP FUNCTION run_items_case_copies_on_delete()`);
    await q.query(`DROP TRIGGER trg_test_cases_item_copies_update ON test_cases`);
    await q.query(`DROP FUNCTION run_items_case_copies_on_update()`);
    await q.query(`
      UPDATE run_items ri
         SET test_case_key = tc.key, test_case_title = tc.title, test_case_priority = tc.priority,
             test_case_tags = tc.tags
        FROM test_cases tc
       WHERE tc.id = ri.test_case_id AND ri.test_case_title IS NULL`);
    await q.query(`UPDATE run_items SET test_case_tags = '{}' WHERE test_case_tags IS NULL`);
    await q.query(`ALTER TABLE run_items ALTER COLUMN test_case_tags SET DEFAULT '{}'`);
    await q.query(`ALTER TABLE run_items ALTER COLUMN test_case_tags SET NOT NULL`);
  }
}
