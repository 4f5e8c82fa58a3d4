/**
 * Chart.js itself, registered piece by piece (only what the dashboard draws is bundled). A separate
 * chunk: `chart.tsx` imports it on demand, so pages without a chart never load it and the pages with
 * one start it alongside their API calls.
 */
import {
  ArcElement,
  CategoryScale,
  Chart,
  type ChartConfiguration,
  DoughnutController,
  Filler,
  Legend,
  LinearScale,
  LineController,
  LineElement,
  PointElement,
  Tooltip,
} from 'chart.js';

Chart.register(ArcElement, CategoryScale, DoughnutController, Filler, Legend, LinearScale, LineController, LineElement, PointElement, Tooltip);
// Tests and screenshots see the final picture at once; nobody needs the chart to grow into place.
Chart.defaults.animation = false;
Chart.defaults.color = '#24292f';
Chart.defaults.font.family = 'system-ui, -apple-system, "Segoe UI", Roboto, sans-serif';

/** Draws `config` on `canvas`; returns what removes it again. */
export function drawChart(canvas: HTMLCanvasElement, config: ChartConfiguration): () => void {
  const chart = new Chart(canvas, { ...config, options: { responsive: true, maintainAspectRatio: false, ...config.options } });
  return () => chart.destroy();
}
