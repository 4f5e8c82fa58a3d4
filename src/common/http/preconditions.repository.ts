import { Injectable } from '@nestjs/common';
import { Db } from '../persistence/db.service';

const TABLE_NAME = /^[a-z_]+$/;

/**
 * The row locks `If-Match` takes before it compares tags (Preconditions), in the request's
 * transaction, so that the comparison and the write see the same version of the resource.
 */
@Injectable()
export class PreconditionsRepository {
  constructor(private readonly db: Db) {}

  /**
   * `FOR NO KEY UPDATE` on one row of a resource table (a ResourceRef's); false when it does not
   * exist. It serialises the writers of the row (a second `If-Match` with the same tag waits, then
   * gets 412) but not the requests that only reference it (`FOR KEY SHARE`): `FOR UPDATE` here made a
   * dependency replace with `If-Match` on component A and another replace naming A as a target
   * take their locks in opposite orders, a deadlock (409 after a second). A delete still takes
   * `FOR UPDATE` when it deletes.
   */
  async lockRow(table: string, id: string): Promise<boolean> {
    if (!TABLE_NAME.test(table)) throw new Error(`not a table name: ${table}`);
    const rows = await this.db.query(
      `SELECT id FROM ${table} WHERE id = $1 FOR NO KEY UPDATE`,
      [id],
    );
    return rows.length > 0;
  }

  /**
   * `FOR UPDATE` on the run of a run item: every change of a run's items and rows takes this lock
   * first (`lockForItemChange`), so If-Match takes it too, in the same order; false when the item
   * does not exist.
   */
  async lockRunOfItem(itemId: string): Promise<boolean> {
    const rows = await this.db.query(
      `SELECT r.id FROM test_runs r WHERE r.id = (SELECT test_run_id FROM run_items WHERE id = $1)
          FOR UPDATE`,
      [itemId],
    );
    return rows.length > 0;
  }

  /** Like {@link lockRunOfItem}, for a row of a run item. */
  async lockRunOfRow(rowId: string): Promise<boolean> {
    const rows = await this.db.query(
      `SELECT r.id FROM test_runs r
        WHERE r.id = (SELECT ri.test_run_id FROM run_item_rows w
                        JOIN run_items ri ON ri.id = w.run_item_id WHERE w.id = $1)
          FOR UPDATE`,
      [rowId],
    );
    return rows.length > 0;
  }
}
