// Label colours as GitLab reads them (Gitlab::Color): the label entities and markdown's label references
// choose their text colour by the same rule.

/** Gitlab::Color::PATTERN: "#RGB" or "#RRGGBB". */
export const COLOR_PATTERN = /^#(?:[0-9A-Fa-f]{3}){1,2}$/;

/** Gitlab::Color#light?: the sum of the channels above 500 (invalid colours are dark). */
export function isLightColor(color: string): boolean {
  if (!COLOR_PATTERN.test(color)) return false;
  const hex = color.length === 4 ? [...color.slice(1)].map((c) => c + c) : (color.slice(1).match(/.{2}/g) as string[]);
  return hex.reduce((sum, h) => sum + Number.parseInt(h, 16), 0) > 500;
}

/** WCAG's relative luminance of "#rgb" / "#rrggbb". */
function luminance(color: string): number {
  const hex = color.length === 4 ? [...color.slice(1)].map((c) => c + c) : (color.slice(1).match(/.{2}/g) ?? []);
  const [r, g, b] = hex.map((h) => {
    const v = Number.parseInt(h, 16) / 255;
    return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4;
  });
  return 0.2126 * (r ?? 0) + 0.7152 * (g ?? 0) + 0.0722 * (b ?? 0);
}

/**
 * The pages' text on a label: black when it contrasts more than white with the label's colour — the better of
 * the two always reaches 4.58:1, above WCAG AA's 4.5:1 for small text (GitLab's sum of channels does not).
 */
export function prefersDarkText(color: string): boolean {
  if (!COLOR_PATTERN.test(color)) return false;
  const l = luminance(color);
  return (l + 0.05) / 0.05 >= 1.05 / (l + 0.05);
}
