/**
 * The data of the search_plan themes, parsed by themes.ts. Fields are written compactly as
 * "name kind [argument] | phrase": the phrase is how task text names the field ("hire date" for
 * `hire_date`); tool results show the name. Relations: "source relation target | phrase".
 */
export interface ThemeSource {
  name: string;
  description: string;
  ood: boolean;
  types: Array<{ name: string; prefix: string; naming: "person" | string; fields: string }>;
  functional: string[];
  linkable: string[];
}

export const THEME_SOURCES: readonly ThemeSource[] = [
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
          "title enum engineer,analyst,designer,manager,director | job title;salary money 40000-220000 | salary;hire_date date | hire date;level integer 1-9 | seniority level;badge code BD | badge number;home_city string | home city",
      },
      {
        name: "team",
        prefix: "TEM",
        naming: "Team,Squad,Guild,Crew",
        fields:
          "focus enum platform,growth,security,data,support | focus area;headcount integer 3-40 | headcount;founded date | founding date;status enum active,paused,dissolved | status",
      },
      {
        name: "project",
        prefix: "PRJ",
        naming: "Initiative,Program,Launch,Project",
        fields:
          "status enum active,on_hold,closed,planned | status;budget money 5000-900000 | budget;deadline date | deadline;priority enum low,medium,high,critical | priority;code code PX | project code",
      },
      {
        name: "office",
        prefix: "OFF",
        naming: "Office,Hub,Campus",
        fields: "city string | city;floors integer 1-40 | number of floors;opened date | opening date;region enum north,south,east,west,central | region",
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
        fields:
          "tier enum basic,plus,premium,student | membership tier;fines money 0-400 | fines balance;joined date | join date;loans integer 0-30 | number of loans;card code LC | library card number",
      },
      {
        name: "book",
        prefix: "BOK",
        naming: "Chronicle,Atlas,Codex,Almanac,Primer",
        fields:
          "genre enum mystery,history,poetry,science,fantasy | genre;pages integer 80-1200 | page count;published date | publication date;condition enum new,good,worn,damaged | condition;isbn code IS | ISBN",
      },
      {
        name: "author",
        prefix: "AUT",
        naming: "person",
        fields:
          "hometown string | hometown;born date | date of birth;awards integer 0-12 | number of awards;style enum lyrical,terse,ornate,plain | writing style",
      },
      {
        name: "branch",
        prefix: "BRN",
        naming: "Library,Reading Room,Archive",
        fields: "city string | city;shelves integer 20-900 | number of shelves;opened date | opening date;status enum open,closed,renovating | status",
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
        fields:
          "blood_type enum A,B,AB,O | blood type;age integer 1-99 | age;admitted date | admission date;bill money 100-90000 | bill amount;chart code CH | chart number;triage enum low,medium,high,urgent | triage level",
      },
      {
        name: "doctor",
        prefix: "DOC",
        naming: "person",
        fields:
          "specialty enum cardiology,neurology,oncology,pediatrics,surgery | specialty;years integer 1-40 | length of practice;licensed date | licensing date;salary money 60000-400000 | salary",
      },
      {
        name: "ward",
        prefix: "WRD",
        naming: "Ward,Wing,Unit",
        fields: "floor integer 1-12 | floor;beds integer 4-60 | number of beds;opened date | opening date;status enum open,closed,quarantined | status",
      },
      {
        name: "appointment",
        prefix: "APT",
        naming: "Consult,Review,Checkup,Session",
        fields:
          "scheduled date | scheduled date;fee money 50-3000 | fee;status enum booked,done,cancelled,missed | status;room integer 1-500 | room number;ref code AP | reference number",
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
        fields:
          "status enum pending,in_transit,delivered,delayed,lost | status;weight integer 1-5000 | weight;shipped date | shipping date;value money 20-250000 | declared value;tracking code TRK | tracking number",
      },
      {
        name: "depot",
        prefix: "DPT",
        naming: "Depot,Yard,Terminal,Warehouse",
        fields: "city string | city;capacity integer 100-50000 | capacity;opened date | opening date;security enum low,standard,high | security level",
      },
      {
        name: "carrier",
        prefix: "CAR",
        naming: "Freight,Haulage,Express,Lines",
        fields: "fleet integer 2-400 | fleet size;rating enum bronze,silver,gold,platinum | rating;founded date | founding date;rate money 100-20000 | rate",
      },
      {
        name: "route",
        prefix: "RTE",
        naming: "Route,Corridor,Lane,Run",
        fields:
          "distance integer 10-4000 | distance;opened date | opening date;status enum open,closed,seasonal | status;toll money 0-900 | toll;code code RT | route code",
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
        fields:
          "discipline enum physics,chemistry,biology,geology,computing | discipline;h_index integer 1-120 | h-index;joined date | join date;salary money 50000-300000 | salary;orcid code OR | ORCID",
      },
      {
        name: "grant",
        prefix: "GRT",
        naming: "Grant,Fellowship,Award,Fund",
        fields:
          "budget money 10000-2000000 | budget;review_level enum light,standard,full | review level;starts date | start date;status enum proposed,active,closed | status;ref code GR | reference number",
      },
      {
        name: "instrument",
        prefix: "INS",
        naming: "Spectrometer,Microscope,Array,Reactor,Scanner",
        fields:
          "calibrated date | calibration date;hours integer 0-9000 | total hours of use;status enum ready,maintenance,retired | status;cost money 1000-800000 | cost",
      },
      {
        name: "paper",
        prefix: "PAP",
        naming: "Study,Survey,Letter,Report",
        fields:
          "published date | publication date;citations integer 0-900 | citation count;venue string | venue;status enum draft,submitted,accepted,rejected | status",
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
        fields:
          "position enum guard,forward,center,keeper,defender | position;goals integer 0-80 | number of goals;signed date | signing date;wage money 20000-900000 | wage;shirt code SH | shirt number",
      },
      {
        name: "club",
        prefix: "CLB",
        naming: "United,Rovers,Athletic,Wanderers",
        fields:
          "founded date | founding date;titles integer 0-30 | number of titles;budget money 100000-9000000 | budget;tier enum first,second,third | league tier",
      },
      {
        name: "venue",
        prefix: "VEN",
        naming: "Arena,Stadium,Park,Ground",
        fields: "city string | city;capacity integer 1000-90000 | capacity;opened date | opening date;surface enum grass,turf,hybrid | playing surface",
      },
      {
        name: "match",
        prefix: "MAT",
        naming: "Derby,Cup Tie,Final,Fixture",
        fields:
          "played date | match date;attendance integer 500-90000 | attendance;status enum scheduled,played,postponed,abandoned | status;ticket money 5-300 | ticket price;code code MT | match code",
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
        fields:
          "department enum antiquities,textiles,prints,sculpture,ceramics | department;tenure integer 1-35 | length of tenure;appointed date | appointment date;stipend money 30000-180000 | stipend;staff code ST | staff number",
      },
      {
        name: "exhibit",
        prefix: "EXB",
        naming: "Collection,Gallery,Display,Exhibit",
        fields:
          "opens date | opening date;visitors integer 100-400000 | visitor count;status enum planned,open,touring,closed | status;budget money 5000-700000 | budget",
      },
      {
        name: "artifact",
        prefix: "ART",
        naming: "Vase,Tablet,Mask,Relic,Idol",
        fields:
          "era enum bronze,iron,classical,medieval,modern | era;acquired date | acquisition date;valuation money 500-5000000 | valuation;condition enum pristine,good,fragile,restored | condition;catalog code CT | catalogue number",
      },
      {
        name: "donor",
        prefix: "DNR",
        naming: "person",
        fields:
          "hometown string | hometown;gifts integer 1-60 | number of gifts;since date | donor-since date;tier enum patron,benefactor,founder | donor tier",
      },
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
        fields:
          "rank enum cadet,first_officer,captain,chief | rank;hours integer 200-30000 | total flight hours;certified date | certification date;salary money 40000-400000 | salary;license code LI | licence number",
      },
      {
        name: "aircraft",
        prefix: "ACF",
        naming: "Skylark,Heron,Condor,Swift,Falcon",
        fields:
          "model enum narrowbody,widebody,regional,turboprop | aircraft class;seats integer 20-520 | seat count;delivered date | delivery date;status enum active,maintenance,stored | status",
      },
      {
        name: "flight",
        prefix: "FLT",
        naming: "Express,Shuttle,Connector,Service",
        fields:
          "departs date | departure date;fare money 40-4000 | fare;status enum scheduled,boarding,departed,cancelled | status;load integer 0-520 | passenger load;number code FL | flight number",
      },
      {
        name: "airport",
        prefix: "APO",
        naming: "International,Airfield,Airport,Aerodrome",
        fields: "city string | city;runways integer 1-6 | number of runways;opened date | opening date;category enum hub,regional,cargo | category",
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
