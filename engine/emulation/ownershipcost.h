#pragma once
// What a bought device costs per hour of use: its purchase price spread over its service life, plus
// the electricity it draws while it runs. A device nobody rents (a Raspberry Pi, a phone, an Edge TPU
// stick) has no hourly price, yet cost per million predictions needs one (docs/devices.md, "Bought
// devices").
namespace trainbench::engine {

// USD per kWh charged when the user gives none (estimate --usd-per-kwh overrides it): an assumption.
// EIA's Electric Power Annual (data for 2023, average revenue per kWh by state) has residential prices
// from 11 cents (Washington, Idaho) to 42 (Hawaii), most states between 12 and 18; 16 cents is the
// middle of that range. A device in a data centre or a factory pays the commercial or industrial rate.
inline constexpr double kDefaultUsdPerKwh = 0.16;

struct OwnershipCost {
    double purchase_usd = 0.0;
    double service_life_years = 0.0;  // the hours it is amortised over: years x 365.25 x 24, in use all of them
    double power_w = 0.0;             // drawn while it predicts
    double usd_per_kwh = kDefaultUsdPerKwh;

    double hoursOfLife() const { return service_life_years * 365.25 * 24.0; }
    // purchase / hours of life + power x electricity price.
    double usdPerHour() const { return purchase_usd / hoursOfLife() + power_w / 1000.0 * usd_per_kwh; }
};

}  // namespace trainbench::engine
