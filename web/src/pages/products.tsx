import { getJson } from '../api';
import { dateTime } from '../format';
import { useLoad } from '../hooks';
import { ProjectNav } from '../project-nav';
import { navigate, pageParam, pageValue } from '../router';
import type { Page, Product, ProductSummary, Readiness } from '../types';
import { Empty, Figures, PageTitle, Pager, PastTheEnd, Show } from '../ui';

/** The project's products, 200 a page (`?page=`), so that none is out of reach. */
export function ProductsPage({ projectId, query }: { projectId: string; query: URLSearchParams }) {
  const page = pageParam(query);
  const products = useLoad(`products:${projectId}:${page}`, () => getJson<Page<Product>>('/products', { project_id: projectId, page, page_size: 200 }));
  const go = (n: number) => navigate(`/projects/${projectId}/products`, { page: pageValue(n) });
  return (
    <>
      <ProjectNav projectId={projectId} current="products" />
      <PageTitle sub="What ships: each product's components, their coverage and its release readiness.">Products</PageTitle>
      <Show value={products} what="products">
        {(p) =>
          p.total === 0 ? (
            <Empty>This project has no products yet.</Empty>
          ) : p.items.length === 0 ? (
            <PastTheEnd page={p.page} total={p.total} pageSize={p.page_size} onPage={go} />
          ) : (
            <>
              <table>
                <caption class="visually-hidden">Products</caption>
                <thead>
                  <tr>
                    <th scope="col">Product</th>
                    <th scope="col">Key</th>
                    <th scope="col">Status</th>
                    <th scope="col">Description</th>
                  </tr>
                </thead>
                <tbody>
                  {p.items.map((x) => (
                    <tr key={x.id}>
                      <th scope="row">
                        <a href={`#/products/${x.id}`}>{x.name}</a>
                      </th>
                      <td>{x.key ?? '—'}</td>
                      <td>{x.status}</td>
                      <td>{x.description ?? '—'}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
              <Pager page={p.page} hasNext={p.has_next} total={p.total} onPage={go} />
            </>
          )
        }
      </Show>
    </>
  );
}

const REASONS: Record<Readiness['blockers'][number]['reason'], string> = {
  uncovered: 'No release-mandatory test covers it',
  failing: 'A covering test fails',
  not_run: 'A covering test has not run',
};

export function ProductPage({ productId }: { productId: string }) {
  const product = useLoad(`product:${productId}`, () => getJson<Product & { project_id: string }>(`/products/${productId}`));
  const summary = useLoad(`summary:${productId}`, () => getJson<ProductSummary>(`/products/${productId}/summary`));
  const readiness = useLoad(`readiness:${productId}`, () => getJson<Readiness>(`/products/${productId}/readiness`));
  if (product.state !== 'done') {
    return (
      <>
        <PageTitle>Product</PageTitle>
        <Show value={product} what="the product">
          {() => null}
        </Show>
      </>
    );
  }
  const p = product.data;
  return (
    <>
      <ProjectNav projectId={p.project_id} current="products" />
      <PageTitle sub={[p.key, p.status].filter(Boolean).join(' · ')}>{p.name}</PageTitle>
      <section aria-labelledby="readiness-title">
        <h2 id="readiness-title">Release readiness</h2>
        <Show value={readiness} what="the readiness verdict">
          {(r) => (
            <>
              <p class={`verdict ${r.verdict}`}>
                <strong>{r.verdict === 'ready' ? 'Ready to ship' : 'Not ready to ship'}</strong>{' '}
                <span>
                  (components at risk level {r.criteria.min_risk_level} or above, evaluated {dateTime(r.evaluated_at)})
                </span>
              </p>
              <Figures
                label="Readiness counts"
                items={[
                  ['Components evaluated', r.counts.components],
                  ['Passing', r.counts.passing],
                  ['Failing', r.counts.failing],
                  ['Not run', r.counts.not_run],
                  ['Uncovered', r.counts.uncovered],
                ]}
              />
              {r.blockers.length === 0 ? (
                <Empty>No blockers.</Empty>
              ) : (
                <table>
                  <caption>Blockers</caption>
                  <thead>
                    <tr>
                      <th scope="col">Component</th>
                      <th scope="col">Risk</th>
                      <th scope="col">Reason</th>
                      <th scope="col" class="num">
                        Tests involved
                      </th>
                    </tr>
                  </thead>
                  <tbody>
                    {r.blockers.map((b) => (
                      <tr key={b.component_id}>
                        <th scope="row">{b.component_name}</th>
                        <td>
                          <span class={`badge risk-${b.risk_level}`}>{b.risk_level}</span> {b.risk_score}
                        </td>
                        <td>{REASONS[b.reason] ?? b.reason}</td>
                        <td class="num">{b.test_case_ids.length}</td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              )}
            </>
          )}
        </Show>
      </section>
      <section aria-labelledby="coverage-title">
        <h2 id="coverage-title">Coverage</h2>
        <Show value={summary} what="the coverage summary">
          {(s) => (
            <>
              <Figures
                label="Coverage summary"
                items={[
                  ['Components', s.total_components],
                  ['Adequately covered', s.adequately_covered_components],
                  ['Inadequately covered', s.inadequately_covered_components],
                  ['Uncovered', s.uncovered_components],
                  ['High-risk uncovered', s.high_risk_uncovered_components],
                  ['Coverage score', `${s.coverage_score_total} / ${s.required_coverage_score_total}`],
                  ['Test cases', s.total_cases],
                  ['Release-mandatory', s.mandatory_release_cases],
                ]}
              />
              <h3>Components by risk</h3>
              {s.per_component_breakdown.length === 0 ? (
                <Empty>No components linked to this product.</Empty>
              ) : (
                <table>
                  <caption class="visually-hidden">Components, highest risk first</caption>
                  <thead>
                    <tr>
                      <th scope="col">Component</th>
                      <th scope="col">Risk</th>
                      <th scope="col" class="num">
                        Coverage
                      </th>
                      <th scope="col">Covered?</th>
                      <th scope="col" class="num">
                        Smoke / regression / deep
                      </th>
                    </tr>
                  </thead>
                  <tbody>
                    {[...s.per_component_breakdown]
                      .sort((a, b) => b.risk_score - a.risk_score || a.component_name.localeCompare(b.component_name))
                      .map((c) => (
                        <tr key={c.component_id}>
                          <th scope="row">
                            {c.component_name}
                            {c.component_key ? <span class="muted"> ({c.component_key})</span> : null}
                          </th>
                          <td>
                            <span class={`badge risk-${c.risk_level}`}>{c.risk_level}</span> {c.risk_score}
                          </td>
                          <td class="num">
                            {c.coverage_score} / {c.required_coverage_score}
                          </td>
                          <td>{c.uncovered ? 'Uncovered' : c.adequately_covered ? 'Adequately' : 'Inadequately'}</td>
                          <td class="num">
                            {c.smoke_case_count} / {c.regression_case_count} / {c.deep_case_count}
                          </td>
                        </tr>
                      ))}
                  </tbody>
                </table>
              )}
            </>
          )}
        </Show>
      </section>
    </>
  );
}
