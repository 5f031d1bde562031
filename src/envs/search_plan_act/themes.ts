/**
 * The themes of search_plan_act worlds. Each theme defines 4 entity types with typed fields and typed
 * relations. Fields are written compactly as "name kind [argument]":
 *   enum a,b,c · integer 1-40 · money 5000-900000 · date · string place · code PX (unique, read-only)
 * Relations: "source relation target | phrase". Functional relations (every source record has exactly
 * one) form the chains of multi-hop tasks; linkable ones are what `link_records` may add.
 */
export type FieldKind = "string" | "integer" | "money" | "date" | "enum";

export interface FieldSpec {
  name: string;
  kind: FieldKind;
  values?: readonly string[];
  min?: number;
  max?: number;
  /** Code prefix: a unique, read-only code such as "PX-44712". */
  code?: string;
  readOnly: boolean;
}

export interface TypeSpec {
  name: string;
  prefix: string;
  /** "person" for first + last names, otherwise the nouns that end thing names ("Calloway Initiative"). */
  naming: "person" | readonly string[];
  fields: FieldSpec[];
}

export interface RelationSpec {
  name: string;
  from: string;
  to: string;
  /** Verb phrase from the source's side: "the office that the project is based in". */
  phrase: string;
  functional: boolean;
}

export interface Theme {
  name: string;
  description: string;
  /** Reserved for search_plan_ood; never generated for train/eval. */
  ood: boolean;
  types: TypeSpec[];
  relations: RelationSpec[];
}

interface ThemeSource {
  name: string;
  description: string;
  ood: boolean;
  types: Array<{ name: string; prefix: string; naming: "person" | string; fields: string }>;
  functional: string[];
  linkable: string[];
}

function parseField(text: string): FieldSpec {
  const [name, kind, argument] = text.trim().split(/\s+/) as [string, string, string | undefined];
  if (kind === "enum") return { name, kind, values: (argument as string).split(","), readOnly: false };
  if (kind === "integer" || kind === "money") {
    const [min, max] = (argument as string).split("-").map(Number) as [number, number];
    return { name, kind, min, max, readOnly: false };
  }
  if (kind === "code") return { name, kind: "string", code: argument, readOnly: true };
  if (kind === "date" || kind === "string") return { name, kind, readOnly: false };
  throw new Error(`theme field '${text}': unknown kind '${kind}'`);
}

function parseRelation(text: string, functional: boolean): RelationSpec {
  const [head, phrase] = text.split("|").map((part) => part.trim()) as [string, string];
  const [from, name, to] = head.split(/\s+/) as [string, string, string];
  return { name, from, to, phrase, functional };
}

function buildTheme(source: ThemeSource): Theme {
  return {
    name: source.name,
    description: source.description,
    ood: source.ood,
    types: source.types.map((type) => ({
      name: type.name,
      prefix: type.prefix,
      naming: type.naming === "person" ? "person" : type.naming.split(","),
      fields: type.fields.split(";").map(parseField),
    })),
    relations: [...source.functional.map((text) => parseRelation(text, true)), ...source.linkable.map((text) => parseRelation(text, false))],
  };
}

const sources: ThemeSource[] = [
  {
    name: "company",
    description: "a company's employees, teams, projects and offices",
    ood: false,
    types: [
      {
        name: "employee",
        prefix: "EMP",
        naming: "person",
        fields:
          "title enum engineer,analyst,designer,manager,director;salary money 40000-220000;hire_date date;level integer 1-9;badge code BD;home_city string",
      },
      {
        name: "team",
        prefix: "TEM",
        naming: "Team,Squad,Guild,Crew",
        fields: "focus enum platform,growth,security,data,support;headcount integer 3-40;founded date;status enum active,paused,dissolved",
      },
      {
        name: "project",
        prefix: "PRJ",
        naming: "Initiative,Program,Launch,Project",
        fields: "status enum active,on_hold,closed,planned;budget money 5000-900000;deadline date;priority enum low,medium,high,critical;code code PX",
      },
      {
        name: "office",
        prefix: "OFF",
        naming: "Office,Hub,Campus",
        fields: "city string;floors integer 1-40;opened date;region enum north,south,east,west,central",
      },
    ],
    functional: [
      "employee member_of team | is a member of",
      "employee works_in office | works in",
      "team located_in office | is located in",
      "project led_by employee | is led by",
      "project based_in office | is based in",
      "office managed_by employee | is managed by",
    ],
    linkable: ["employee assigned_to project | is assigned to", "project depends_on project | depends on"],
  },
  {
    name: "library",
    description: "a library network's members, books, authors and branches",
    ood: false,
    types: [
      {
        name: "member",
        prefix: "MBR",
        naming: "person",
        fields: "tier enum basic,plus,premium,student;fines money 0-400;joined date;loans integer 0-30;card code LC",
      },
      {
        name: "book",
        prefix: "BOK",
        naming: "Chronicle,Atlas,Codex,Almanac,Primer",
        fields: "genre enum mystery,history,poetry,science,fantasy;pages integer 80-1200;published date;condition enum new,good,worn,damaged;isbn code IS",
      },
      { name: "author", prefix: "AUT", naming: "person", fields: "hometown string;born date;awards integer 0-12;style enum lyrical,terse,ornate,plain" },
      {
        name: "branch",
        prefix: "BRN",
        naming: "Library,Reading Room,Archive",
        fields: "city string;shelves integer 20-900;opened date;status enum open,closed,renovating",
      },
    ],
    functional: [
      "book written_by author | was written by",
      "book held_at branch | is held at",
      "member registered_at branch | is registered at",
      "author lives_near branch | lives near",
      "branch curated_by member | is curated by",
      "member favours author | favours",
    ],
    linkable: ["member borrowed book | has borrowed", "member reserved book | has reserved"],
  },
  {
    name: "clinic",
    description: "a clinic's patients, doctors, wards and appointments",
    ood: false,
    types: [
      {
        name: "patient",
        prefix: "PAT",
        naming: "person",
        fields: "blood_type enum A,B,AB,O;age integer 1-99;admitted date;bill money 100-90000;chart code CH;triage enum low,medium,high,urgent",
      },
      {
        name: "doctor",
        prefix: "DOC",
        naming: "person",
        fields: "specialty enum cardiology,neurology,oncology,pediatrics,surgery;years integer 1-40;licensed date;salary money 60000-400000",
      },
      { name: "ward", prefix: "WRD", naming: "Ward,Wing,Unit", fields: "floor integer 1-12;beds integer 4-60;opened date;status enum open,closed,quarantined" },
      {
        name: "appointment",
        prefix: "APT",
        naming: "Consult,Review,Checkup,Session",
        fields: "scheduled date;fee money 50-3000;status enum booked,done,cancelled,missed;room integer 1-500;ref code AP",
      },
    ],
    functional: [
      "patient treated_by doctor | is treated by",
      "patient stays_in ward | stays in",
      "doctor works_in ward | works in",
      "appointment for_patient patient | is for",
      "appointment with_doctor doctor | is with",
      "ward supervised_by doctor | is supervised by",
    ],
    linkable: ["patient referred_to doctor | is referred to", "doctor consults_on patient | consults on"],
  },
  {
    name: "logistics",
    description: "a logistics network's shipments, depots, carriers and routes",
    ood: false,
    types: [
      {
        name: "shipment",
        prefix: "SHP",
        naming: "Parcel,Crate,Consignment,Pallet",
        fields: "status enum pending,in_transit,delivered,delayed,lost;weight integer 1-5000;shipped date;value money 20-250000;tracking code TRK",
      },
      {
        name: "depot",
        prefix: "DPT",
        naming: "Depot,Yard,Terminal,Warehouse",
        fields: "city string;capacity integer 100-50000;opened date;security enum low,standard,high",
      },
      {
        name: "carrier",
        prefix: "CAR",
        naming: "Freight,Haulage,Express,Lines",
        fields: "fleet integer 2-400;rating enum bronze,silver,gold,platinum;founded date;rate money 100-20000",
      },
      {
        name: "route",
        prefix: "RTE",
        naming: "Route,Corridor,Lane,Run",
        fields: "distance integer 10-4000;opened date;status enum open,closed,seasonal;toll money 0-900;code code RT",
      },
    ],
    functional: [
      "shipment carried_by carrier | is carried by",
      "shipment follows route | follows",
      "route starts_at depot | starts at",
      "carrier headquartered_at depot | is headquartered at",
      "depot served_by carrier | is served by",
      "route run_by carrier | is run by",
    ],
    linkable: ["shipment stored_at depot | is stored at", "carrier operates route | operates"],
  },
  {
    name: "research_lab",
    description: "a research lab's scientists, grants, instruments and papers",
    ood: false,
    types: [
      {
        name: "scientist",
        prefix: "SCI",
        naming: "person",
        fields: "discipline enum physics,chemistry,biology,geology,computing;h_index integer 1-120;joined date;salary money 50000-300000;orcid code OR",
      },
      {
        name: "grant",
        prefix: "GRT",
        naming: "Grant,Fellowship,Award,Fund",
        fields: "budget money 10000-2000000;review_level enum light,standard,full;starts date;status enum proposed,active,closed;ref code GR",
      },
      {
        name: "instrument",
        prefix: "INS",
        naming: "Spectrometer,Microscope,Array,Reactor,Scanner",
        fields: "calibrated date;hours integer 0-9000;status enum ready,maintenance,retired;cost money 1000-800000",
      },
      {
        name: "paper",
        prefix: "PAP",
        naming: "Study,Survey,Letter,Report",
        fields: "published date;citations integer 0-900;venue string;status enum draft,submitted,accepted,rejected",
      },
    ],
    functional: [
      "grant awarded_to scientist | is awarded to",
      "paper authored_by scientist | is authored by",
      "instrument operated_by scientist | is operated by",
      "scientist funded_by grant | is funded by",
      "paper funded_by grant | is funded by",
      "instrument purchased_with grant | was purchased with",
    ],
    linkable: ["paper uses instrument | uses", "scientist reviews paper | reviews"],
  },
  {
    name: "sports_league",
    description: "a sports league's players, clubs, venues and matches",
    ood: true,
    types: [
      {
        name: "player",
        prefix: "PLY",
        naming: "person",
        fields: "position enum guard,forward,center,keeper,defender;goals integer 0-80;signed date;wage money 20000-900000;shirt code SH",
      },
      {
        name: "club",
        prefix: "CLB",
        naming: "United,Rovers,Athletic,Wanderers",
        fields: "founded date;titles integer 0-30;budget money 100000-9000000;tier enum first,second,third",
      },
      {
        name: "venue",
        prefix: "VEN",
        naming: "Arena,Stadium,Park,Ground",
        fields: "city string;capacity integer 1000-90000;opened date;surface enum grass,turf,hybrid",
      },
      {
        name: "match",
        prefix: "MAT",
        naming: "Derby,Cup Tie,Final,Fixture",
        fields: "played date;attendance integer 500-90000;status enum scheduled,played,postponed,abandoned;ticket money 5-300;code code MT",
      },
    ],
    functional: [
      "player plays_for club | plays for",
      "club home_venue venue | plays home games at",
      "match held_at venue | is held at",
      "match hosted_by club | is hosted by",
      "venue owned_by club | is owned by",
      "club captained_by player | is captained by",
    ],
    linkable: ["player scouted_by club | is scouted by", "match features player | features"],
  },
  {
    name: "museum",
    description: "a museum's curators, exhibits, artifacts and donors",
    ood: true,
    types: [
      {
        name: "curator",
        prefix: "CUR",
        naming: "person",
        fields: "department enum antiquities,textiles,prints,sculpture,ceramics;tenure integer 1-35;appointed date;stipend money 30000-180000;staff code ST",
      },
      {
        name: "exhibit",
        prefix: "EXB",
        naming: "Collection,Gallery,Display,Exhibit",
        fields: "opens date;visitors integer 100-400000;status enum planned,open,touring,closed;budget money 5000-700000",
      },
      {
        name: "artifact",
        prefix: "ART",
        naming: "Vase,Tablet,Mask,Relic,Idol",
        fields:
          "era enum bronze,iron,classical,medieval,modern;acquired date;valuation money 500-5000000;condition enum pristine,good,fragile,restored;catalog code CT",
      },
      { name: "donor", prefix: "DNR", naming: "person", fields: "hometown string;gifts integer 1-60;since date;tier enum patron,benefactor,founder" },
    ],
    functional: [
      "artifact shown_in exhibit | is shown in",
      "exhibit curated_by curator | is curated by",
      "artifact donated_by donor | was donated by",
      "donor advised_by curator | is advised by",
      "curator mentored_by curator | is mentored by",
      "exhibit sponsored_by donor | is sponsored by",
    ],
    linkable: ["artifact loaned_to exhibit | is loaned to", "donor supports exhibit | supports"],
  },
  {
    name: "airline",
    description: "an airline's pilots, aircraft, flights and airports",
    ood: true,
    types: [
      {
        name: "pilot",
        prefix: "PIL",
        naming: "person",
        fields: "rank enum cadet,first_officer,captain,chief;hours integer 200-30000;certified date;salary money 40000-400000;license code LI",
      },
      {
        name: "aircraft",
        prefix: "ACF",
        naming: "Skylark,Heron,Condor,Swift,Falcon",
        fields: "model enum narrowbody,widebody,regional,turboprop;seats integer 20-520;delivered date;status enum active,maintenance,stored",
      },
      {
        name: "flight",
        prefix: "FLT",
        naming: "Express,Shuttle,Connector,Service",
        fields: "departs date;fare money 40-4000;status enum scheduled,boarding,departed,cancelled;load integer 0-520;number code FL",
      },
      {
        name: "airport",
        prefix: "APO",
        naming: "International,Airfield,Airport,Aerodrome",
        fields: "city string;runways integer 1-6;opened date;category enum hub,regional,cargo",
      },
    ],
    functional: [
      "flight flown_by pilot | is flown by",
      "flight uses_aircraft aircraft | uses",
      "flight departs_from airport | departs from",
      "aircraft based_at airport | is based at",
      "pilot based_at airport | is based at",
      "airport operated_by pilot | is overseen by",
    ],
    linkable: ["pilot rated_for aircraft | is rated for", "flight diverted_to airport | is diverted to"],
  },
];

export const THEMES: readonly Theme[] = sources.map(buildTheme);

export function themeByName(name: string): Theme | undefined {
  return THEMES.find((theme) => theme.name === name);
}

export const IN_DISTRIBUTION_THEMES = THEMES.filter((theme) => !theme.ood).map((theme) => theme.name);
export const OOD_THEMES = THEMES.filter((theme) => theme.ood).map((theme) => theme.name);
