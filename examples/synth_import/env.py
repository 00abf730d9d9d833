class FerryLineEnv:
    """A ferry line between island ports: sailings with passenger seats, and bookings."""

    def __init__(self, init_config: dict):
        self.ports = init_config.get("ports", {})
        self.sailings = init_config.get("sailings", {})
        self.bookings = init_config.get("bookings", {})
        self.counters = init_config.get("counters", {"bookings": 0})
        # Internal tracking for conflict triggering
        self._conflict_fired = False

    # --------- INFORMATION QUERY OPERATIONS ---------
    def list_sailings(self, origin: str, destination: str):
        """List today's sailings from one port to another.

        Args:
            origin: The departure port's id, e.g. PORT-ALDER.
            destination: The arrival port's id.
        """
        if origin not in self.ports or destination not in self.ports:
            return {"success": False, "error": "unknown port"}
        found = [{"sailing_id": k, **v} for k, v in sorted(self.sailings.items())
                 if v["origin"] == origin and v["destination"] == destination]
        return {"success": True, "data": found}

    def get_sailing(self, sailing_id: str):
        """Read one sailing: departure time, seats left and status.

        Args:
            sailing_id: The sailing's id, e.g. SL-1540.
        """
        if sailing_id not in self.sailings:
            return {"success": False, "error": f"no sailing {sailing_id}"}
        return {"success": True, "data": {"sailing_id": sailing_id, **self.sailings[sailing_id]}}

    def get_booking(self, booking_id: str):
        """Read one booking.

        Args:
            booking_id: The booking's id, e.g. FB-1.
        """
        booking = self.bookings.get(booking_id)
        return {"success": booking is not None, **({"data": {"booking_id": booking_id, **booking}} if booking
                                                    else {"error": f"no booking {booking_id}"})}

    # --------- STATE-CHANGE OPERATIONS ---------
    def book_passengers(self, sailing_id: str, passengers: int):
        """Book foot passengers on a scheduled sailing with enough seats left.

        Args:
            sailing_id: The sailing to book.
            passengers: How many foot passengers.
        """
        sailing = self.sailings.get(sailing_id)
        if sailing is None:
            return {"success": False, "error": f"no sailing {sailing_id}"}
        if sailing["status"] != "scheduled":
            return {"success": False, "error": f"sailing {sailing_id} is {sailing['status']}"}
        if passengers < 1 or passengers > sailing["seats_left"]:
            return {"success": False, "error": f"sailing {sailing_id} has {sailing['seats_left']} seats left"}
        self.counters["bookings"] += 1
        booking_id = f"FB-{self.counters['bookings']}"
        self.bookings[booking_id] = {"sailing_id": sailing_id, "passengers": passengers, "status": "confirmed"}
        sailing["seats_left"] -= passengers
        return {"success": True, "data": {"booking_id": booking_id}, "message": f"{booking_id} confirmed"}

    def cancel_booking(self, booking_id: str):
        """Cancel a confirmed booking and release its seats.

        Args:
            booking_id: The booking to cancel.
        """
        booking = self.bookings.get(booking_id)
        if booking is None or booking["status"] != "confirmed":
            return {"success": False, "error": f"no confirmed booking {booking_id}"}
        booking["status"] = "cancelled"
        self.sailings[booking["sailing_id"]]["seats_left"] += booking["passengers"]
        return {"success": True, "message": f"{booking_id} cancelled"}
