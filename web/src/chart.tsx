/**
 * A chart on a canvas: the canvas is an image with a label (the same figures stand in a table or
 * list next to each chart); Chart.js draws on it once its chunk has loaded (`chart-draw.ts`, kept
 * out of the first bundle).
 */
import type { ChartConfiguration } from 'chart.js';
import { useEffect, useRef } from 'preact/hooks';

let chartModule: Promise<typeof import('./chart-draw')> | null = null;

/**
 * Starts loading Chart.js (once): a page with a chart calls it when it opens, so the chunk arrives
 * while the page waits for its data rather than after.
 */
export function preloadChart(): Promise<typeof import('./chart-draw')> {
  chartModule ??= import('./chart-draw');
  return chartModule;
}

export function ChartCanvas({ config, label, height = 240 }: { config: ChartConfiguration; label: string; height?: number }) {
  const canvas = useRef<HTMLCanvasElement>(null);
  useEffect(() => {
    let live = true;
    let destroy: (() => void) | null = null;
    preloadChart().then(
      ({ drawChart }) => {
        if (live && canvas.current) destroy = drawChart(canvas.current, config);
      },
      () => {
        chartModule = null; // a failed load is tried again by the next chart
      },
    );
    return () => {
      live = false;
      destroy?.();
    };
  }, [config]);
  return (
    <div class="chart" style={{ height: `${height}px` }}>
      <canvas ref={canvas} role="img" aria-label={label} />
    </div>
  );
}
