def check_booked_on_later_sailing(env):
    for booking in getattr(env, "bookings", {}).values():
        if booking.get("sailing_id") == "SL-1610" and booking.get("passengers") == 2 \
                and booking.get("status") == "confirmed":
            return True, "Two passengers are booked on the 16:10."
    return False, "No booking on the 16:10."


def check_booked_on_first_sailing(env):
    for booking in getattr(env, "bookings", {}).values():
        if booking.get("sailing_id") == "SL-1540" and booking.get("status") == "confirmed":
            return True, "Booked on the 15:40."
    return False, "No booking on the 15:40."
