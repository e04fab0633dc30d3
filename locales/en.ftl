# English: the fallback language. Every message the guest emails and pages use is here; each other
# locales/<tag>.ftl must carry the same message ids (a host test fails on any missing one).
# Syntax: Project Fluent, https://projectfluent.org/fluent/guide/
# Dates, numbers and money follow CLDR (https://cldr.unicode.org/); English keeps the
# day-month order the engine has always used ("Fri 12 June 2026", CLDR en-GB).

## Dates and times (the dates themselves are CLDR data: src/domain/i18n/cldr.rs)
date-range = { $from } – { $to }
date-from = from { $date }
datetime-local = { $date }, { $time } (local time)

## Shared phrases
hi = Hi { $name },
# A greeting for a guest whose first name is unknown: complete on its own, no gender assumed.
hi-no-name = Hello,
# A label before its value ("Hotel: …"), in the language's punctuation.
label-colon = { $label }:
label-hotel = Hotel
label-booking = Booking
label-booking-id = Booking ID
label-hcn = Hotel confirmation number
label-checkin = Check-in
label-checkout = Check-out
label-room = Room
label-room-n = Room { $n }
label-guests = Guests
label-total = Total price
label-pnr = Airline booking reference
label-passengers = { $count ->
    [one] Passenger
   *[other] Passengers
}
nights = { $count ->
    [one] { $count } night
   *[other] { $count } nights
}
adults = { $count ->
    [one] { $count } adult
   *[other] { $count } adults
}
children = { $count ->
    [one] { $count } child
   *[other] { $count } children
}
instructions-title = Check-in instructions

## Booking confirmation (hotel)
confirmation-subject = Your stay at { $hotel } is confirmed
confirmation-heading = Your stay is confirmed
confirmation-intro = Thank you for booking with { $brand }. Your stay at { $hotel } is confirmed.
confirmation-hcn-known = Please show the hotel confirmation number at the front desk when you check in, and keep your booking ID at hand if you contact us.
confirmation-hcn-later = The hotel's own confirmation number usually follows in a separate email a few days before arrival. Please keep your booking ID at hand if you contact us.
confirmation-closing = We look forward to your trip.

## Hotel confirmation number
hcn-subject = Your confirmation number from { $hotel }
hcn-heading = Your hotel confirmation number
hcn-intro = { $hotel } has confirmed your reservation in its own system. Your hotel confirmation number is:
hcn-intro-text = { $hotel } has confirmed your reservation in its own system.
hcn-line = Your hotel confirmation number: { $number }
hcn-show = Please show this number at the front desk when you check in: it is how the hotel finds your reservation.
hcn-booking-id = Your booking ID with { $brand } stays { $id }. Please keep it at hand if you contact us.

## Arrival guide
arrival-subject = Your stay at { $hotel } starts in 3 days
arrival-heading = Your stay starts in 3 days
arrival-intro = Your stay at { $hotel } begins on { $date }. Here is everything you need for your arrival.
arrival-before-title = Before you go
arrival-bring-id = A photo ID or passport for check-in
arrival-bring-card = A payment card for incidentals: many hotels hold a deposit on arrival
arrival-bring-booking-id = Your booking ID
arrival-bring-both = Your booking ID and the hotel confirmation number
arrival-late = If your plans change or you expect to arrive late, please reply to this email.
arrival-closing = Have a good trip.

## Check-in day
checkin-subject = Today: check-in at { $hotel }
checkin-heading = Check-in is today
checkin-intro = Today you check in at { $hotel }. We wish you a smooth journey.
checkin-ready = Please have your photo ID and a payment card ready at the front desk. If you are delayed, reply to this email and we will let the hotel know.

## Thank you
thanks-subject = Thank you for staying at { $hotel }
thanks-heading = Thank you
thanks-intro = Thank you for staying at { $hotel }. We hope you had a wonderful time and a good journey home.
thanks-reply = If anything about your stay needs our attention, simply reply to this email.
thanks-regards = Warm regards,

## Booking updated
updated-subject = Your booking at { $hotel } was updated
updated-heading = Your booking was updated
updated-intro = Your booking at { $hotel } has been updated.
updated-what-changed = Here is what changed:
updated-before = Before
updated-now = Now
updated-current = Your booking now
updated-unexpected = If this change is not what you expected, please reply to this email and quote your booking ID.
field-hotel-id = Hotel code
field-hotel-name = Hotel
field-checkin = Check-in
field-checkout = Check-out
field-room-name = Room { $n }
field-room-board = Board, room { $n }
field-room-adults = Adults, room { $n }
field-room-children = Children, room { $n }
field-guests = Guests
field-holder = Booked by
field-hotel-confirmation-number = Hotel confirmation number
field-segment-flight-number = Flight number, flight { $n }
field-segment-origin = From, flight { $n }
field-segment-destination = To, flight { $n }
field-segment-departure = Departure, flight { $n }
field-segment-arrival = Arrival, flight { $n }
field-passengers = Passengers

## Flights
flight-subject = Your flight { $from } → { $to } is confirmed
flight-heading = Your flight is confirmed
flight-intro = Thank you for booking with { $brand }. Your flight from { $from } to { $to } is confirmed.
flight-list-title = { $count ->
    [one] Your flight
   *[other] Your flights
}
flight-number = Flight { $number }
flight-departs = Departs
flight-arrives = Arrives
flight-local-times = All times are local to the airport concerned.
flight-checkin-pnr = Use the airline booking reference to check in with the airline.
flight-rules = Please check the airline's check-in and baggage rules before you travel, and make sure the passenger names match your travel documents.
flight-closing = We wish you a good flight.
flight-changed-subject = Important: your flight schedule changed
flight-changed-heading = Your flight schedule changed
flight-changed-intro = The airline has changed the schedule of your flight booking. Please check the new times below.
flight-changed-intro-pnr = The airline has changed the schedule of your flight booking { $pnr }. Please check the new times below.
flight-changed-new = New schedule
flight-changed-previous = Previous schedule
flight-changed-todo = What to do
flight-changed-reply = Please reply to this email to accept the new schedule. If the new times do not work for you, contact us by replying to this email and we will discuss the alternatives with you.
flight-booking-title = Flight booking { $id }

## Cancellation
cancelled-subject = Your booking { $id } is cancelled
cancelled-heading = Your booking is cancelled
cancelled-intro = Your booking { $id } has been cancelled.
cancelled-fee = Cancellation fee
cancelled-refund = Refund amount
cancelled-fee-applies = A cancellation fee applies to this booking.
cancelled-questions = If you did not expect this cancellation or have any questions, please reply to this email and quote your booking ID.

## Booking not confirmed (the supplier failed a paid booking)
notice-title-cancelled = Your booking has been cancelled
notice-title-not-confirmed = We could not confirm your booking
notice-cancelled = We are sorry: your booking has been cancelled. The provider could not keep it, so please do not travel on the strength of the confirmation we sent you.
notice-cancelled-trip = We are sorry: your booking for { $trip } has been cancelled. The provider could not keep it, so please do not travel on the strength of the confirmation we sent you.
notice-not-confirmed = We are sorry: we could not confirm your booking. The provider was unable to complete it, so there is no reservation in your name.
notice-not-confirmed-trip = We are sorry: we could not confirm your booking for { $trip }. The provider was unable to complete it, so there is no reservation in your name.
notice-book-again = If you would still like to travel, you are welcome to book again; prices and availability may have changed. If you have any question, simply reply to this email.
refund-not-charged = You have not been charged.
refund-unknown = If any payment was taken for this booking, it will be refunded in full; we will write to you if we need anything from you.
refund-refunding = Your payment is being refunded to the card you paid with. Refunds usually take 5–10 business days to appear on your statement.
refund-refunding-amount = Your payment of { $amount } is being refunded to the card you paid with. Refunds usually take 5–10 business days to appear on your statement.
refund-refunded = Your payment has been refunded to the card you paid with. It usually takes 5–10 business days to appear on your statement.
refund-refunded-amount = Your payment of { $amount } has been refunded to the card you paid with. It usually takes 5–10 business days to appear on your statement.
refund-arranging = We are arranging your refund and will confirm by email once it has been made.

## Unfinished checkout
checkout-trip-stay = your stay, { $dates }
checkout-subject = Your booking wasn’t completed — nothing was charged
checkout-heading = Your booking wasn’t completed
checkout-intro = You started a booking with { $brand }, but it wasn’t completed, and nothing was charged.
checkout-intro-trip = You started a booking with { $brand } for { $trip }, but it wasn’t completed, and nothing was charged.
checkout-reasons = If you changed your mind, there is nothing you need to do. If you meant to book, these are the two most common reasons a card payment doesn’t go through, and how to fix each:
checkout-retry = Try your booking again
checkout-retry-prices = Prices and availability can change, so please check them again when you retry. If something else went wrong, simply reply to this email.
declined-funds-subject = Your payment didn’t go through: not enough funds or credit
declined-security-subject = Your payment was stopped by a security check
declined-intro = Your booking with { $brand } wasn’t completed, and nothing was charged. We checked the payment and this is what stopped it:
declined-intro-trip = Your booking with { $brand } for { $trip } wasn’t completed, and nothing was charged. We checked the payment and this is what stopped it:
declined-questions = Prices and availability can change, so please check them again when you retry. If you have any questions, simply reply to this email.
fix-funds-title = Not enough funds or available credit
fix-funds-why = The card's balance or credit limit may not cover the full amount of the stay, or a daily spending limit may have been reached.
fix-funds-how = How to fix it: use another card, or ask your bank to raise the limit or move funds to this card, then try again.
fix-security-title = A security check by your card issuer or the payment processor
fix-security-why = Banks and payment processors sometimes stop a payment that looks unusual to them, for example a larger amount, a payment abroad or a first purchase from a new shop. This protects you and says nothing bad about you.
fix-security-how = How to fix it: approve the payment in your banking app, or call the number on the back of your card and tell them you want to make this payment, then try again.

## Marketing footer and unsubscribe pages
marketing-footer = This is a marketing email from { $brand }.
marketing-unsubscribe-link = Unsubscribe from marketing emails
marketing-unsubscribe-one-click = with one click.
marketing-unsubscribe-text = Unsubscribe from marketing emails with one click: { $url }
marketing-bookings-still = Emails about your bookings will still reach you.
unsubscribe-title = Unsubscribe from marketing emails
unsubscribe-question = Unsubscribe from marketing emails?
unsubscribe-who = { $email } will no longer receive marketing emails from { $brand }.
unsubscribe-bookings-still = Emails about your bookings (confirmations, changes, check-in details) will still reach you.
unsubscribe-button = Unsubscribe
unsubscribe-nothing-yet = Opening this page changed nothing.
unsubscribe-retry-title = Please try again later
unsubscribe-retry = Your request could not be handled right now. Nothing was changed.
unsubscribe-invalid-title = This unsubscribe link is not valid
unsubscribe-invalid-cut = It may have been cut short or altered. Open the link from the email again, or copy all of it. Nothing was changed.
unsubscribe-invalid-list = It is not a link to unsubscribe from marketing emails. Nothing was changed.
unsubscribe-post-title = Nothing was changed
unsubscribe-post-only = An unsubscribe request must be a POST with the form body List-Unsubscribe=One-Click (RFC 8058). Use the button on the unsubscribe page.
unsubscribe-done-title = You are unsubscribed
unsubscribe-done = { $email } will no longer receive marketing emails. Emails about your bookings will still reach you.
unsubscribe-done-brand = { $email } will no longer receive marketing emails from { $brand }. Emails about your bookings will still reach you.

## The owner's answer to a guest's message (the owner's own words go between these)
answer-subject = About your booking { $ref }
answer-about = Your booking { $ref }
answer-reply = To write to us again, simply reply to this email.

## Board types (known supplier codes and names; any other board is shown as the supplier wrote it)
board-room-only = Room only
board-breakfast = Breakfast included
board-half-board = Half board
board-full-board = Full board
board-all-inclusive = All inclusive

## The calendar attachment
# One line under every email that carries calendar files: what they do in the guest's calendar.
calendar-note-add = { $count ->
    [one] The attached calendar file adds this booking to your calendar. Our later emails update it, and a cancellation removes it.
   *[other] The attached calendar files add each flight to your calendar. Our later emails update them, and a cancellation removes them.
}
calendar-note-cancel = { $count ->
    [one] The attached calendar file removes the cancelled booking from your calendar.
   *[other] The attached calendar files remove the cancelled flights from your calendar.
}
calendar-note-update-remove = The attached calendar files update your flights in your calendar and remove the flights that no longer exist.
