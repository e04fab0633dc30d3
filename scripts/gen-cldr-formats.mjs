// `node scripts/gen-cldr-formats.mjs` (Node 22 of the devDependencies: `npm run gen-cldr`):
// regenerates the regional formats the guest emails are written with, from the CLDR data of
// Node's own `Intl` (ICU), into two committed files:
//
//   src/domain/i18n/cldr.rs          the compact table the Worker compiles in (do not edit)
//   tests/fixtures/cldr-intl.json    what `Intl` itself writes for a grid of dates, times and
//                                    amounts in every one of those formats; the host test
//                                    tests/host/regional_formats.rs renders the same grid with
//                                    the Rust table and must write exactly the same strings
//
// Run it by hand after a Node upgrade (the output names the ICU and CLDR versions it came from);
// neither the build nor setup generates anything. The end-to-end run checks the emails' own
// amounts and dates against the Node `Intl` of the test run (tests/e2e/language-and-calendar).
//
// What is taken from Intl, per format locale (the regions of the six languages that guests write,
// https://cldr.unicode.org/ — `Intl.DateTimeFormat` / `Intl.NumberFormat` of ECMA-402):
// - the full date (`dateStyle: "full"`) as a pattern of weekday, day, month and year with its
//   literals, and the weekday and month names it uses;
// - the short time (`timeStyle: "short"`): 24-hour or 12-hour with its day-period names;
// - money (`style: "currency"`): the decimal and group symbols, whether 1234 is grouped (CLDR
//   minimumGroupingDigits), the symbol's side and the literal between symbol and number, and for
//   every currency Intl knows (every ISO 4217 code and more) the symbol and literal wherever they
//   differ from the ISO code with the locale's usual literal; the fraction digits of each currency
//   (CLDR supplemental data, the same in every locale) wherever they are not 2.
import { writeFileSync } from "node:fs";
import { join, dirname } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");

/**
 * The format locales: `[id, Intl locale]`. The id is what `bookings.guest_locale` stores and
 * `i18n::region` resolves a guest's tag to (a bare language gets its row marked default).
 * English without a region keeps the day-month order the engine has always written (en-GB).
 */
const LOCALES = [
  ["en", "en-GB"],
  ["en-US", "en-US"],
  ["en-CA", "en-CA"],
  ["en-AU", "en-AU"],
  ["en-IE", "en-IE"],
  ["en-NZ", "en-NZ"],
  ["es", "es-ES"],
  ["es-MX", "es-MX"],
  ["es-419", "es-419"],
  ["es-AR", "es-AR"],
  ["es-CO", "es-CO"],
  ["es-CL", "es-CL"],
  ["es-US", "es-US"],
  ["fr", "fr-FR"],
  ["fr-CA", "fr-CA"],
  ["fr-CH", "fr-CH"],
  ["fr-BE", "fr-BE"],
  ["de", "de-DE"],
  ["de-AT", "de-AT"],
  ["de-CH", "de-CH"],
  ["pt", "pt-BR"],
  ["pt-PT", "pt-PT"],
  ["it", "it-IT"],
  ["it-CH", "it-CH"],
];

const UTC = "UTC";
// A Monday, then one date per weekday and per month (mid-month noon UTC: the same day everywhere).
const weekdayDates = [...Array(7)].map((_, i) => new Date(Date.UTC(2027, 2, 1 + i, 12)));
const monthDates = [...Array(12)].map((_, i) => new Date(Date.UTC(2027, i, 15, 12)));

/** The full date of `locale` as a pattern: `{W}` weekday, `{d}` day, `{M}` month, `{y}` year. */
function datePattern(locale) {
  const f = new Intl.DateTimeFormat(locale, { dateStyle: "full", timeZone: UTC });
  const parts = f.formatToParts(new Date(Date.UTC(2027, 2, 5, 12)));
  if (parts.map((p) => p.value).join("") !== f.format(new Date(Date.UTC(2027, 2, 5, 12)))) throw new Error(`${locale}: format and formatToParts differ`);
  const code = { weekday: "{W}", day: "{d}", month: "{M}", year: "{y}" };
  return parts
    .map((p) => {
      if (p.type === "literal") return p.value;
      if (!(p.type in code)) throw new Error(`${locale}: unexpected date part ${p.type}`);
      if (p.type === "day" && p.value !== "5") throw new Error(`${locale}: the day is not numeric (${p.value})`);
      if (p.type === "year" && p.value !== "2027") throw new Error(`${locale}: the year is not numeric (${p.value})`);
      return code[p.type];
    })
    .join("");
}

function part(parts, type) {
  const p = parts.find((x) => x.type === type);
  if (!p) throw new Error(`no ${type} part in ${JSON.stringify(parts)}`);
  return p.value;
}

function names(locale) {
  const f = new Intl.DateTimeFormat(locale, { dateStyle: "full", timeZone: UTC });
  return {
    weekdays: weekdayDates.map((d) => part(f.formatToParts(d), "weekday")),
    months: monthDates.map((d) => part(f.formatToParts(d), "month")),
  };
}

/**
 * The short time: `{H}` 24-hour with two digits, `{G}` 24-hour without a leading zero, `{h}`
 * 12-hour without a leading zero, `{m}` minutes, `{a}` day period.
 */
function timePattern(locale) {
  const f = new Intl.DateTimeFormat(locale, { timeStyle: "short", timeZone: UTC });
  const morning = f.formatToParts(new Date(Date.UTC(2027, 2, 5, 7, 5)));
  const evening = f.formatToParts(new Date(Date.UTC(2027, 2, 5, 19, 5)));
  const hour = part(morning, "hour");
  const twelve = part(evening, "hour") === "7";
  if (twelve && hour !== "7") throw new Error(`${locale}: a 12-hour clock with two hour digits (${hour})`);
  const code = twelve ? "{h}" : hour === "07" ? "{H}" : "{G}";
  // V8's `format` writes U+202F NARROW NO-BREAK SPACE as a plain space in times (its parts keep
  // it): the pattern follows what `format` writes, the string a guest's browser shows too.
  const joined = morning.map((p) => p.value).join("");
  const formatted = f.format(new Date(Date.UTC(2027, 2, 5, 7, 5)));
  const narrowAsSpace = joined !== formatted;
  if (narrowAsSpace && joined.replaceAll("\u202f", " ") !== formatted) throw new Error(`${locale}: format and formatToParts differ beyond U+202F`);
  const pattern = morning
    .map((p) => {
      if (p.type === "literal") return narrowAsSpace ? p.value.replaceAll("\u202f", " ") : p.value;
      if (p.type === "hour") return code;
      if (p.type === "minute") return "{m}";
      if (p.type === "dayPeriod") return "{a}";
      throw new Error(`${locale}: unexpected time part ${p.type}`);
    })
    .join("");
  const periods = twelve ? [part(morning, "dayPeriod"), part(evening, "dayPeriod")].map((p) => (narrowAsSpace ? p.replaceAll("\u202f", " ") : p)) : ["", ""];
  return { pattern, periods };
}

/** How `locale` writes 1234.5 (or 12345.5) of `currency`. */
function money(locale, currency, amount = 1234.5) {
  const f = new Intl.NumberFormat(locale, { style: "currency", currency });
  const parts = f.formatToParts(amount);
  const first = parts.findIndex((p) => p.type === "integer");
  const lastNumber = parts.findLastIndex((p) => ["integer", "group", "decimal", "fraction"].includes(p.type));
  const cur = parts.findIndex((p) => p.type === "currency");
  const prefix = cur < first;
  const between = prefix ? parts.slice(cur + 1, first) : parts.slice(lastNumber + 1, cur);
  if (between.some((p) => p.type !== "literal")) throw new Error(`${locale} ${currency}: something else between symbol and number`);
  const outside = prefix ? parts.slice(0, cur) : parts.slice(cur + 1);
  if (outside.length) throw new Error(`${locale} ${currency}: text outside the symbol and number`);
  return {
    prefix,
    symbol: parts[cur].value,
    sep: between.map((p) => p.value).join(""),
    decimal: parts.find((p) => p.type === "decimal")?.value ?? null,
    group: parts.find((p) => p.type === "group")?.value ?? null,
    digits: f.resolvedOptions().maximumFractionDigits,
    text: f.format(amount),
  };
}

const currencies = Intl.supportedValuesOf("currency");
const digits = new Map(currencies.map((c) => [c, money("en-US", c).digits]));

const rows = [];
const nameSets = [];
const nameIndex = (list) => {
  const key = list.join("|");
  let i = nameSets.indexOf(key);
  if (i < 0) i = nameSets.push(key) - 1;
  return i;
};
for (const [id, locale] of LOCALES) {
  const eur = money(locale, "EUR", 12345.5);
  if (!eur.decimal || !eur.group) throw new Error(`${locale}: EUR without decimal or group symbol`);
  // CLDR minimumGroupingDigits: 2 when a four-digit integer is written without a group symbol.
  const minGrouping = money(locale, "EUR", 1234.5).group ? 1 : 2;
  // Every currency: the side must be the locale's own; the usual literal is the one of most codes.
  const all = currencies.map((c) => ({ code: c, ...money(locale, c) }));
  for (const m of all) {
    if (m.prefix !== eur.prefix) throw new Error(`${locale} ${m.code}: the symbol changes side`);
    if ((m.digits > 0 && m.decimal !== eur.decimal) || (m.group && m.group !== eur.group)) throw new Error(`${locale} ${m.code}: other number symbols`);
  }
  const count = new Map();
  for (const m of all.filter((m) => m.symbol === m.code)) count.set(m.sep, (count.get(m.sep) ?? 0) + 1);
  const sep = [...count.entries()].sort((a, b) => b[1] - a[1])[0][0];
  const symbols = all.filter((m) => m.symbol !== m.code || m.sep !== sep).map((m) => `${m.code}\t${m.symbol}\t${m.sep}`);
  const { weekdays, months } = names(locale);
  const time = timePattern(locale);
  rows.push({
    id,
    locale,
    date: datePattern(locale),
    weekdays: nameIndex(weekdays),
    months: nameIndex(months),
    time: time.pattern,
    periods: time.periods,
    decimal: eur.decimal,
    group: eur.group,
    minGrouping,
    prefix: eur.prefix,
    sep,
    symbols,
  });
}

/** A Rust string literal: escapes `\`, `"` and every character outside printable ASCII. */
function rs(s) {
  let out = '"';
  for (const ch of s) {
    const c = ch.codePointAt(0);
    if (ch === "\\" || ch === '"') out += `\\${ch}`;
    else if (ch === "\t") out += "\\t";
    else if (ch === "\n") out += "\\n";
    else if (c < 0x20 || c === 0xa0 || (c >= 0x2000 && c <= 0x206f)) out += `\\u{${c.toString(16)}}`;
    else out += ch;
  }
  return `${out}"`;
}

const versions = `Node ${process.versions.node}, ICU ${process.versions.icu}, CLDR ${process.versions.cldr}`;
const notTwo = [...digits.entries()].filter(([, d]) => d !== 2);
const rust = `//! Regional formats from CLDR, as Node's \`Intl\` writes them (${versions}).
//! Generated by scripts/gen-cldr-formats.mjs: do not edit; run the script to change it.
//! Read by [\`super::region\`]; the shape of each row is [\`Formats\`].

/// The formats of one CLDR locale (see [\`super::region\`] for what each field means).
pub(super) struct Formats {
    pub id: &'static str,
    pub date: &'static str,
    pub weekdays: usize,
    pub months: usize,
    pub time: &'static str,
    pub periods: [&'static str; 2],
    pub decimal: &'static str,
    pub group: &'static str,
    pub min_grouping: usize,
    pub prefix: bool,
    pub sep: &'static str,
    /// \`CODE\\tSYMBOL\\tLITERAL\\n\` for each currency written otherwise than its code and \`sep\`.
    pub symbols: &'static str,
}

/// Weekday (Monday first) and month names, \`|\`-separated, as the full date writes them.
pub(super) const NAMES: [&str; ${nameSets.length}] = [
${nameSets.map((s) => `    ${rs(s)},`).join("\n")}
];

pub(super) const FORMATS: [Formats; ${rows.length}] = [
${rows
  .map(
    (r) => `    Formats {
        id: ${rs(r.id)},
        date: ${rs(r.date)},
        weekdays: ${r.weekdays},
        months: ${r.months},
        time: ${rs(r.time)},
        periods: [${rs(r.periods[0])}, ${rs(r.periods[1])}],
        decimal: ${rs(r.decimal)},
        group: ${rs(r.group)},
        min_grouping: ${r.minGrouping},
        prefix: ${r.prefix},
        sep: ${rs(r.sep)},
        symbols: ${rs(r.symbols.map((s) => `${s}\n`).join(""))},
    },`,
  )
  .join("\n")}
];

/// Currencies whose amounts have other than two fraction digits (CLDR supplemental data).
pub(super) const DIGITS: &str = ${rs(notTwo.map(([c, d]) => `${c}${d}`).join(" "))};
`;
writeFileSync(join(root, "src/domain/i18n/cldr.rs"), rust);

// The grid the host test renders with the Rust table and compares (exact strings), one object
// per format locale: `money` every currency Intl knows at 1234.5 (at 12345 for currencies without
// decimals), `grid` a few currencies at amounts from 0.5 to a million, `dates` the full date of a
// week and of the 15th of every month of 2027, `times` five times of day.
const amounts = ["0.5", "7", "999.99", "12345", "1234567.89"];
const gridCurrencies = ["EUR", "USD", "GBP", "CHF", "BRL", "MXN", "CAD", "JPY", "BHD", "CLP", "ARS", "AUD", "INR", "CNY", "XAF", "ISK", "SEK"];
const fmt = (locale, c, a) => new Intl.NumberFormat(locale, { style: "currency", currency: c }).format(Number(a));
const fits = (c, a) => (a.split(".")[1]?.length ?? 0) <= digits.get(c);
const fixture = {};
for (const [id, locale] of LOCALES) {
  const dates = {};
  for (const d of [...weekdayDates, ...monthDates]) dates[d.toISOString().slice(0, 10)] = new Intl.DateTimeFormat(locale, { dateStyle: "full", timeZone: UTC }).format(d);
  const times = {};
  for (const [h, m] of [[0, 0], [7, 5], [12, 30], [19, 45], [23, 59]]) {
    times[`${String(h).padStart(2, "0")}:${String(m).padStart(2, "0")}`] = new Intl.DateTimeFormat(locale, { timeStyle: "short", timeZone: UTC }).format(new Date(Date.UTC(2027, 2, 5, h, m)));
  }
  const grid = [];
  for (const c of gridCurrencies) for (const a of amounts) if (fits(c, a)) grid.push([c, a, fmt(locale, c, a)]);
  fixture[id] = {
    locale,
    money: Object.fromEntries(
      currencies.map((c) => {
        const a = fits(c, "1234.5") ? "1234.5" : "12345";
        return [c, [a, fmt(locale, c, a)]];
      }),
    ),
    grid,
    dates,
    times,
  };
}
writeFileSync(join(root, "tests/fixtures/cldr-intl.json"), `${JSON.stringify({ generatedWith: versions, formats: fixture })}\n`);
const bytes = Buffer.byteLength(rust);
console.log(`src/domain/i18n/cldr.rs: ${rows.length} format locales, ${currencies.length} currencies, ${rows.reduce((n, r) => n + r.symbols.length, 0)} symbol entries, ${bytes} bytes (${versions})`);

